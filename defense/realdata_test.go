package defense

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

func neighborFile(t *testing.T) string {
	dir := os.Getenv("TEXTARMOR_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	p := filepath.Join(dir, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: %s not available (%v); set TEXTARMOR_DATA", p, err)
	}
	return p
}

// Acceptance check 1, the parts that need no counter-fitted vectors (the
// vectors are not in shared/data, so the squared-vs-plain δ comparison
// cannot be run; see docs/ftml.md): every S(w) has ≤ 8 entries, w ∉ S(w),
// the 21 stop words, UNK and padding have none, and the documented example.
func TestSynonymTableFromJiaFile(t *testing.T) {
	n, err := lexicon.LoadNeighbors(neighborFile(t))
	if err != nil {
		t.Fatal(err)
	}
	words := []string{text.PadWord, text.UnkWord, "substantial", "sizeable", "sizable", "considerable", "significant", "momentous",
		"major", "large", "important", "film"}
	words = append(words, lexicon.FTML21Words()...)
	vocab, err := text.NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	syn := NewSynonymTable(n, vocab, 8)
	for id := int32(0); int(id) < vocab.Len(); id++ {
		s := syn.Of(id)
		if len(s) > 8 {
			t.Fatalf("%q has %d synonyms", vocab.Word(id), len(s))
		}
		for _, u := range s {
			if u == id || u <= text.UnkID {
				t.Fatalf("%q lists %q", vocab.Word(id), vocab.Word(u))
			}
		}
		if (id <= text.UnkID || lexicon.FTML21().Has(vocab.Word(id))) && len(s) > 0 {
			t.Fatalf("%q should have no synonyms", vocab.Word(id))
		}
	}
	var got []string
	for _, u := range syn.Of(vocab.ID("substantial")) {
		got = append(got, vocab.Word(u))
	}
	want := []string{"sizeable", "sizable", "considerable", "significant", "momentous", "major", "large", "important"}
	if len(got) != len(want) {
		t.Fatalf("S(substantial) = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("S(substantial) = %v, want %v", got, want)
		}
	}
	// Whole file: ≤ 8 neighbours, no self-edge.
	for _, w := range n.Words() {
		l := n.Synonyms(w)
		if len(l) > 8 {
			t.Fatalf("%q has %d neighbours in the file", w, len(l))
		}
	}
	if n.Has("the") && len(n.Synonyms("the")) > 0 {
		t.Fatalf("'the' has neighbours %v", n.Synonyms("the"))
	}
}
