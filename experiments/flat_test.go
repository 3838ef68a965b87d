package experiments

import "testing"

// The printed tables parse, and spot values land in the right cells.
func TestFLATPaperValues(t *testing.T) {
	for _, ds := range []string{"sst2-sent", "imdb", "agnews", "trec"} {
		for k := range flatPaperSA {
			flatPaper(flatPaperSA, k, ds, 1)
		}
		for k := range flatPaperIG {
			flatPaper(flatPaperIG, k, ds, 3)
			flatPaper(flatPaperLIME, k, ds, 2)
		}
	}
	for _, c := range []struct {
		table   map[string]string
		key, ds string
		size, i int
		want    float64
	}{
		{flatPaperIG, "textfooler/cnn/flat", "trec", 3, 0, 62.20},
		{flatPaperIG, "pwws/lstm/adv", "agnews", 3, 2, 0.88},
		{flatPaperLIME, "textfooler/lstm/flat", "agnews", 2, 0, 0.41},
		{flatPaperSA, "lstm/base", "imdb", 1, 0, 88.03},
		{flatPaperSA, "cnn/flat/pwws", "sst2-sent", 1, 0, 83.31},
	} {
		if got := flatPaper(c.table, c.key, c.ds, c.size)[c.i]; got != c.want {
			t.Errorf("%s %s [%d] = %g, want %g", c.key, c.ds, c.i, got, c.want)
		}
	}
	if flatPaper(flatPaperSA, "cnn/base", "files", 1) != nil {
		t.Error("a dataset outside the paper got paper values")
	}
}

// By default the FLAT protocol attacks the whole test set, but only the
// first 10,000 IMDB test reviews (spec F14); a given --n stands.
func TestFlatAttackN(t *testing.T) {
	for _, c := range []struct {
		dataset string
		n, want int
	}{{"imdb", -1, 10000}, {"sst2-sent", -1, 0}, {"", -1, 0}, {"imdb", 0, 0}, {"imdb", 500, 500}, {"trec", 7, 7}} {
		if got := FLATAttackN(c.dataset, c.n); got != c.want {
			t.Errorf("FLATAttackN(%q, %d) = %d, want %d", c.dataset, c.n, got, c.want)
		}
	}
}
