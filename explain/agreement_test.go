package explain

import (
	"math"
	"testing"
)

// Aggregate: a plain mean over pairs, or per gold class then over classes.
func TestAgreementAggregate(t *testing.T) {
	scores := []PairScore{
		{Gold: 0, TI: 0.2, Tau: 0.1, TauOK: true, Explained: true},
		{Gold: 0, TI: 0.4, Tau: 0.3, TauOK: true, Explained: true},
		{Gold: 1, TI: 1.0, Tau: 0.9, TauOK: true, Explained: true, Mismatch: true},
		{Gold: 1, TI: 0.6, Undefined: 1, Explained: true},
		{Gold: 1, Explained: false}, // an empty text: not a pair
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	all := Aggregate(scores, false)
	if all.Pairs != 4 || all.TauPairs != 3 || all.TauUndefined != 1 || all.LengthMismatch != 1 ||
		!near(all.TopK, (0.2+0.4+1.0+0.6)/4) || !near(all.KendallTau, (0.1+0.3+0.9)/3) {
		t.Errorf("all: %+v", all)
	}
	gold := Aggregate(scores, true)
	if gold.Pairs != 4 || !near(gold.TopK, ((0.2+0.4)/2+(1.0+0.6)/2)/2) || !near(gold.KendallTau, ((0.1+0.3)/2+0.9)/2) {
		t.Errorf("Gold: %+v", gold)
	}
	// Standard errors, written out: sample variance / n under the root;
	// the gold macro average adds the classes' squared errors (a class of
	// one τ adds none) and divides by the number of classes.
	seTI := math.Sqrt((0.35 / 3) / 4) // deviations from 0.55: −.35 −.15 .45 .05
	seTau := math.Sqrt((0.01 + 0.09 + 0.81 - 1.3*1.3/3) / 2 / 3)
	if !near(all.TopKSE, seTI) || !near(all.KendallTauSE, seTau) {
		t.Errorf("all: SE %v / %v, want %v / %v", all.KendallTauSE, all.TopKSE, seTau, seTI)
	}
	goldTI := math.Sqrt(0.02/2+0.08/2) / 2
	goldTau := math.Sqrt(0.02/2) / 2
	if !near(gold.TopKSE, goldTI) || !near(gold.KendallTauSE, goldTau) {
		t.Errorf("Gold: SE %v / %v, want %v / %v", gold.KendallTauSE, gold.TopKSE, goldTau, goldTI)
	}
}
