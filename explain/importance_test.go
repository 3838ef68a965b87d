package explain

import (
	"math"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// TestSummarizePhi: ids 0 and 1 (<pad>, <unk>) are left out; of the real
// words' φ 0.95, 0.05, 0.5, 0.7 one is above 0.9, one below 0.1, one inside
// (0.4, 0.6), and the median is 0.6.
func TestSummarizePhi(t *testing.T) {
	s := SummarizePhi([]float32{9, 9, 0.95, 0.05, 0.5, 0.7})
	if s.ShareAbove09 != 0.25 || s.ShareBelow01 != 0.25 || s.Share04to06 != 0.25 || math.Abs(s.Median-0.6) > 1e-6 {
		t.Fatalf("SummarizePhi = %+v", s)
	}
}

// TestSynonymGap: "good" has the in-vocabulary neighbour "fine" (φ 0.9 and
// 0.6), "bad" none in the vocabulary: one candidate word, one pair, gap
// 0.3; the table's 2 neighbours per word are fewer than the spec's 10,
// which is declared.
func TestSynonymGap(t *testing.T) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "fine", "bad"})
	nb := lexicon.NewNeighbors("test")
	nb.Set("good", []string{"fine", "great"})
	nb.Set("bad", []string{"awful"})
	g := SynonymGap([]float32{0, 0, 0.9, 0.6, 0.1}, vocab, nb, 10, 1)
	if g.CandidateWords != 1 || g.Pairs != 1 || g.Deviation == "" {
		t.Fatalf("SynonymGap = %+v", g)
	}
	if math.Abs(g.Mean-0.3) > 1e-6 || g.Variance > 1e-12 {
		t.Fatalf("gap mean %v variance %v, want 0.3 and 0", g.Mean, g.Variance)
	}
}

func TestImportanceCorrelations(t *testing.T) {
	phi := []float32{0, 0, 0.1, 0.5, 0.9}
	if ImportanceCorrelations(phi, nil, nil) != nil {
		t.Fatal("no WF and no SF must give nil")
	}
	c := ImportanceCorrelations(phi, []float64{1, 2, 3}, nil)
	if c == nil || c.WIWF == nil || c.WIWF.R == nil || math.Abs(*c.WIWF.R-1) > 1e-9 || c.WISF != nil {
		t.Fatalf("correlations %+v", c)
	}
}
