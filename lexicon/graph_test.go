package lexicon

import (
	"slices"
	"testing"

	"github.com/textarmor/textarmor/text"
)

func TestVocabGraphIsSymmetricAndInVocabulary(t *testing.T) {
	vocab, err := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "fine", "nice", "bad", "awful", "table", "oov"})
	if err != nil {
		t.Fatal(err)
	}
	syn := NewNeighbors("test")
	syn.Set("good", []string{"fine", "nice", "missing"}) // "missing" is not in the vocabulary
	syn.Set("bad", []string{"awful"})
	syn.Set("table", []string{"table"}) // a self loop is dropped
	syn.Set("awful", []string{text.UnkWord})
	g := VocabGraph(syn, vocab)
	want := map[string][]string{"good": {"fine", "nice"}, "fine": {"good"}, "nice": {"good"}, "bad": {"awful"}, "awful": {"bad"}}
	for id := range g {
		var got []string
		for _, j := range g[id] {
			got = append(got, vocab.Word(j))
		}
		if w := vocab.Word(int32(id)); !slices.Equal(got, want[w]) {
			t.Fatalf("%s: neighbours %v, want %v", w, got, want[w])
		}
	}
}
