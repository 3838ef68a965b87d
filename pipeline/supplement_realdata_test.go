package pipeline_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
)

// The numbers docs/ftml.md gives for FTML's vocabulary supplement on IMDB
// with the shared MiniLM: the dictionary, the tokens added, the synonym
// coverage and α0 over the dictionary's rows.
func TestIMDBSupplementRealData(t *testing.T) {
	dir := os.Getenv("TEXTARMOR_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	ckpt := filepath.Join(dir, "models", "all-MiniLM-L6-v2")
	if _, err := os.Stat(filepath.Join(ckpt, "config.json")); err != nil {
		t.Skipf("skipping: %s not available (%v); set TEXTARMOR_DATA", ckpt, err)
	}
	ds, err := dataset.Load("imdb", dir)
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	m, err := model.ImportHF(ckpt, model.ImportOptions{Classes: ds.Classes})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(ds.Train))
	for i, e := range ds.Train {
		texts[i] = e.Text
	}
	words := model.DictionaryWords(m.Pieces, texts, pipeline.DefaultVocabSupplement)
	added, err := m.SupplementVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := pipeline.LoadNeighbors("", dir)
	if err != nil {
		t.Fatal(err)
	}
	syn, err := defense.NewPieceSynonymTable(n, m.Pieces, words, 8)
	if err != nil {
		t.Fatal(err)
	}
	with, total := syn.Coverage()
	a0 := defense.FTMLAlpha0Rows(m.Net.Emb.W.Value, syn.Dictionary(), 2, false, rand.New(rand.NewSource(42)))
	t.Logf("dictionary %d, added %d, vocabulary %d, with synonyms %d of %d, alpha0 %.4f", len(words), added, m.Pieces.Size(), with, total, a0)
	if len(words) != 49179 || added != 30616 || m.Pieces.Size() != 61138 || with != 24457 || a0 < 1.3055 || a0 > 1.3065 {
		t.Errorf("docs/ftml.md's numbers no longer hold")
	}
	// The table's other rows: dictionary, added, vocabulary.
	for name, want := range map[string][3]int{"sst2": {13651, 5371, 35893}, "agnews": {19108, 7231, 37753}} {
		ds, err := dataset.Load(name, dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.ImportHF(ckpt, model.ImportOptions{Classes: ds.Classes})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, e := range ds.Train {
			texts = append(texts, e.Text)
		}
		words := model.DictionaryWords(m.Pieces, texts, pipeline.DefaultVocabSupplement)
		added, err := m.SupplementVocab(words)
		if got := [3]int{len(words), added, m.Pieces.Size()}; err != nil || got != want {
			t.Errorf("%s: dictionary, added, vocabulary %v, want %v (%v)", name, got, want, err)
		}
	}
}
