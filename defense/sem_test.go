package defense

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

func TestSEMEncoding(t *testing.T) {
	// ids 0, 1 are padding and UNK.
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3}, {2, 4}, {3}, nil, {7}, {6}})
	if got, want := SEMEncoding(syn), []int32{0, 1, 2, 2, 2, 5, 6, 6}; !slices.Equal(got, want) {
		t.Errorf("encoding %v, want %v", got, want)
	}
	if sh, n := SharedCodePairs(syn, SEMEncoding(syn)); sh != 6 || n != 6 {
		t.Errorf("shared-code pairs %d of %d, want 6 of 6", sh, n)
	}
	// 4 is uncoded when visited; its nearest coded synonym is 2 (5 comes
	// later), so 4 and then 5 take code 2.
	syn = NewSynonymTableIDs([][]int32{nil, nil, nil, nil, {5, 2}, nil})
	if got, want := SEMEncoding(syn), []int32{0, 1, 2, 3, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("encoding %v, want %v", got, want)
	}
	// The greedy is not a closure: 3 takes its own code and passes it to 4
	// and then 5, but 2 was coded before and keeps its own, so the pair
	// (5, 2) is split: 3 of 4 pairs share a code.
	syn = NewSynonymTableIDs([][]int32{nil, nil, nil, {4}, {5, 3}, {2}})
	code := SEMEncoding(syn)
	if sh, n := SharedCodePairs(syn, code); sh != 3 || n != 4 || !slices.Equal(code, []int32{0, 1, 2, 3, 3, 3}) {
		t.Errorf("encoding %v: shared-code pairs %d of %d, want [0 1 2 3 3 3] and 3 of 4", code, sh, n)
	}
}

// Clusters from each word's nearest synonym only: 2's second synonym 4
// is left out, so 4 keeps a code of its own; the shared share is still
// counted over the whole table.
func TestSEMNearest(t *testing.T) {
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3, 4}, {2}, {5}, {4}})
	full := NewSEM(syn)
	if want := []int32{0, 1, 2, 2, 2, 2}; !slices.Equal(full.Map, want) {
		t.Fatalf("all synonyms: encoding %v, want %v", full.Map, want)
	}
	near := NewSEMNearest(syn, 1)
	if want := []int32{0, 1, 2, 2, 4, 4}; !slices.Equal(near.Map, want) {
		t.Errorf("nearest 1: encoding %v, want %v", near.Map, want)
	}
	// Pairs of the whole table: (2,3) (2,4) (3,2) (4,5) (5,4); (2,4) is split.
	if near.shared != 4 || near.pairs != 5 || full.shared != 5 || full.pairs != 5 {
		t.Errorf("shared pairs: nearest %d of %d, all %d of %d; want 4 of 5 and 5 of 5", near.shared, near.pairs, full.shared, full.pairs)
	}
	if near.Info()["k"] != 1 || full.Info()["k"] != nil {
		t.Errorf("records: nearest %v, all %v", near.Info(), full.Info())
	}
	if l := syn.Nearest(1).Of(2); !slices.Equal(l, []int32{3}) || !slices.Equal(syn.Of(2), []int32{3, 4}) {
		t.Errorf("Nearest(1) gives %v and leaves the table %v", l, syn.Of(2))
	}
}

// SEM trains through the encoding, saves it with the model, and makes
// predictions invariant to swapping a word for one with the same code.
func TestSEMTrainsAndIsInvariant(t *testing.T) {
	m, syn, tr, dev := setup(t, 3)
	sem := NewSEM(syn)
	opt := train.Options{Epochs: 10, BatchSize: 32, LR: 5e-3, Seed: 7, Out: filepath.Join(t.TempDir(), "m")}
	if _, err := train.Run(m, sem, tr, dev, opt); err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(m.Net, dev); acc < 0.9 {
		t.Errorf("dev accuracy %.3f after SEM training, want >= 0.9", acc)
	}
	loaded, err := model.Load(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(loaded.Net.Cfg.IDMap, sem.Map) {
		t.Fatal("the saved model lost the id map")
	}
	// Swap every word for another word with the same code.
	byCode := map[int32][]int32{}
	for id, c := range sem.Map {
		byCode[c] = append(byCode[c], int32(id))
	}
	var orig, swapped [][]int32
	n := 0
	for _, e := range dev {
		s := append([]int32(nil), e.IDs...)
		for i, id := range s {
			if g := byCode[sem.Map[id]]; len(g) > 1 {
				s[i] = g[(slices.Index(g, id)+1)%len(g)]
				n++
			}
		}
		orig, swapped = append(orig, e.IDs), append(swapped, s)
	}
	if n == 0 {
		t.Fatal("no word shares a code")
	}
	a, b := loaded.Net.Predict(orig), loaded.Net.Predict(swapped)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("text %d: probabilities %v vs %v after same-code swaps", i, a[i], b[i])
		}
	}
}

func accuracy(m *nn.Classifier, ex []train.Example) float64 {
	var seqs [][]int32
	for _, e := range ex {
		seqs = append(seqs, e.IDs)
	}
	ok := 0
	for i, p := range m.Predict(seqs) {
		if nn.Argmax(p) == ex[i].Label {
			ok++
		}
	}
	return float64(ok) / float64(len(ex))
}
