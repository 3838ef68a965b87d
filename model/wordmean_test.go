package model

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// row returns a copy of word id's row of m's embedding table.
func row(m *Model, id int32) []float32 {
	d := m.Net.Emb.W.Value.Shape[1]
	return append([]float32(nil), m.Net.Emb.W.Value.Data[int(id)*d:int(id+1)*d]...)
}

func TestWordMeanAveragesKnownWords(t *testing.T) {
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 4, 2
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "bad", "film"})
	m, err := New(Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 2, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	good, film, unk := row(m, vocab.ID("good")), row(m, vocab.ID("film")), row(m, text.UnkID)
	if unk[0] == 0 && unk[1] == 0 {
		t.Fatal("the unknown row is zero: the test could not tell it was left out")
	}
	// MaxLen 2 is not applied; unknown words are left out; an all-unknown
	// text is the zero vector.
	vecs, err := WordMean{m}.Embed([]string{"Good zzz film film", "zzz yyy", "good"})
	if err != nil {
		t.Fatal(err)
	}
	for k := range good {
		want := (good[k] + 2*film[k]) / 3
		if d := vecs[0][k] - want; d > 1e-6 || d < -1e-6 {
			t.Errorf("coordinate %d: %g, want the mean of good, film, film = %g", k, vecs[0][k], want)
		}
		if vecs[1][k] != 0 || vecs[2][k] != good[k] {
			t.Errorf("coordinate %d: unknown-only %g (want 0), one word %g (want %g)", k, vecs[1][k], vecs[2][k], good[k])
		}
	}
	// SEM's id map: the words of a group read the group's row.
	m.Net.Cfg.IDMap = []int32{0, 1, 2, 2, 4} // bad → good's row
	vecs, _ = WordMean{m}.Embed([]string{"bad"})
	if vecs[0][0] != good[0] {
		t.Errorf("with an id map, bad gives %v, want good's row %v", vecs[0], good)
	}
}

func TestWordMeanOfTransformerSkipsSpecialPieces(t *testing.T) {
	m := tinyTransformer(t)
	idThe, _ := m.Pieces.ID("the")
	idMovie, _ := m.Pieces.ID("movie")
	the, movie := row(m, idThe), row(m, idMovie)
	vecs, err := WordMean{m}.Embed([]string{"the movie", "[CLS]"})
	if err != nil {
		t.Fatal(err)
	}
	for k := range the {
		want := (the[k] + movie[k]) / 2
		if d := vecs[0][k] - want; d > 1e-6 || d < -1e-6 {
			t.Fatalf("coordinate %d: %g, want %g ([CLS] and [SEP] left out)", k, vecs[0][k], want)
		}
	}
	if _, err := (WordMean{}).Embed([]string{"x"}); err == nil {
		t.Error("no model: accepted")
	}
}
