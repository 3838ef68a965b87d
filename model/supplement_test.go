package model

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

func TestDictionaryWords(t *testing.T) {
	m := tinyTransformer(t)
	texts := []string{"The movie was good, playing well.", "good good movie 2 the", "playing4 Don't"}
	// By count, ties in order of first occurrence: good 3, the 2, movie 2,
	// was, ",", playing, ".", "2", … ("well" is unknown in the tiny
	// vocabulary; "," is not alphabetic).
	got := DictionaryWords(m.Pieces, texts, 6)
	want := []string{"good", "the", "movie", "was", "playing"}
	if !slices.Equal(got, want) {
		t.Fatalf("top 6 alphabetic = %q, want %q", got, want)
	}
	if got := DictionaryWords(m.Pieces, texts, 0); got != nil {
		t.Fatalf("n = 0 gave %q", got)
	}
}

// TestSupplementVocab: added words are read whole, their rows are the mean
// of their former pieces' rows, old rows and predictions on old tokens are
// unchanged, and the model saves and loads with the grown vocabulary.
func TestSupplementVocab(t *testing.T) {
	m := tinyTransformer(t)
	before := m.Net.Emb.W.Value.Clone()
	v, d := m.Pieces.Size(), m.Net.Emb.Dim()
	oldPieces := m.Encode("playing the")
	n, err := m.SupplementVocab([]string{"playing", "the", "played", "playing"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || m.Pieces.Size() != v+2 || m.Net.Cfg.VocabSize != v+2 || m.Net.Emb.W.Value.Shape[0] != v+2 {
		t.Fatalf("added %d; vocab %d, config %d, table %v", n, m.Pieces.Size(), m.Net.Cfg.VocabSize, m.Net.Emb.W.Value.Shape)
	}
	ids := m.Encode("playing the")
	if len(ids) != len(oldPieces)-1 || ids[1] != int32(v) {
		t.Fatalf("playing the: %v (before %v)", ids, oldPieces)
	}
	W := m.Net.Emb.W.Value.Data
	if tensor.MaxAbsDiff(W[:v*d], before.Data) != 0 {
		t.Fatal("existing rows changed")
	}
	play, ing := int(oldPieces[1]), int(oldPieces[2])
	for j := 0; j < d; j++ {
		want := (before.Data[play*d+j] + before.Data[ing*d+j]) / 2
		if diff := W[v*d+j] - want; diff > 1e-6 || diff < -1e-6 {
			t.Fatalf("row of playing [%d] = %g, want the pieces' mean %g", j, W[v*d+j], want)
		}
	}
	// "played" was unknown ([UNK]): its row is the unknown token's.
	unk := int(m.Pieces.UnkID())
	if tensor.MaxAbsDiff(W[(v+1)*d:(v+2)*d], before.Data[unk*d:(unk+1)*d]) != 0 {
		t.Fatal("row of played is not the [UNK] row")
	}
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	samePredictions(t, "supplemented save/load", m, back)
	if !slices.Equal(back.Encode("playing the"), ids) {
		t.Fatalf("loaded model reads %v", back.Encode("playing the"))
	}
	if n, err := m.SupplementVocab([]string{"playing"}); n != 0 || err != nil {
		t.Fatalf("a second supplement of known words: %d, %v", n, err)
	}
	m.Net.Cfg.IDMap = make([]int32, m.Pieces.Size())
	if _, err := m.SupplementVocab([]string{"fresh"}); err == nil {
		t.Fatal("supplement after an id map accepted")
	}
}
