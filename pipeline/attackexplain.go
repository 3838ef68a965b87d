package pipeline

import (
	"fmt"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
)

// ExplainConfig is the interpretation-agreement pass after an attack
// (--explain): between each successful attack's original and adversarial
// text, Kendall's τ-b and the top-k intersection of their attributions,
// position-aligned, averaged over classes and then over pairs (FLAT spec
// §9.2).
type ExplainConfig struct {
	Method string // ig or lime; "" = no pass (--explain)
	K      int    // k of the top-k intersection (--explain-k)
	// Label is all (explain every class, average over classes, then pairs:
	// spec §12 F11's default) or gold (each pair's gold label, averaged per
	// gold class, then over classes: F11's alternative); "" = all
	// (--explain-label).
	Label string
	// Pairs explains a seeded uniform sample of this many pairs (FLAT spec
	// §9.2 samples 1,000 for LIME); 0 = all (--explain-pairs).
	Pairs int
}

// NewExplainConfig returns the CLI's defaults: no pass; when one is asked
// for, top-5, every class, every pair.
func NewExplainConfig() ExplainConfig { return ExplainConfig{K: 5, Label: "all"} }

// checkNumbers validates K and Pairs (checked with the other numbers,
// before the names).
func (e ExplainConfig) checkNumbers() error {
	switch {
	case e.K < 1:
		return configErrorf("--explain-k %d must be at least 1", e.K)
	case e.Pairs < 0:
		return configErrorf("--explain-pairs %d must be ≥ 0 (0 = all)", e.Pairs)
	}
	return nil
}

// checkNames validates Method and Label.
func (e ExplainConfig) checkNames() error {
	switch e.Method {
	case "", "ig", "lime":
	default:
		return configErrorf("--explain %q: want ig or lime", e.Method)
	}
	switch e.Label {
	case "", "all", "gold":
	default:
		return configErrorf("--explain-label %q: want all or gold", e.Label)
	}
	return nil
}

// Check validates the pass's settings.
func (e ExplainConfig) Check() error {
	if err := e.checkNumbers(); err != nil {
		return err
	}
	return e.checkNames()
}

// labelMode is Label with its default filled in.
func (e ExplainConfig) labelMode() string {
	if e.Label == "" {
		return "all"
	}
	return e.Label
}

// journalPath names the journal of an attack CSV for these settings; the
// method and label mode are in the name so that ig and lime (or all and
// gold) runs on one CSV keep separate journals.
func (e ExplainConfig) journalPath(csvPath string) string {
	return fmt.Sprintf("%s.explain-%s-%s.jsonl", csvPath, e.Method, e.labelMode())
}

// explainJournal is where an explain pass keeps each pair's scores as they
// are made, so that a stopped pass resumes as the attack does; the zero
// value keeps none.
type explainJournal struct {
	path, modelDigest string
	resume            bool
}

// agreement explains every successful result's two texts
// (explain.AgreementPass).
func (e ExplainConfig) agreement(m *model.Model, rs []attack.Result, seed int64, workers int, j explainJournal) (*explain.Agreement, error) {
	var pairs []explain.Pair
	for _, r := range rs {
		if r.Type == attack.Successful && r.PerturbedText != r.OriginalText {
			pairs = append(pairs, explain.Pair{Index: r.Index, Gold: r.GroundTruth, Orig: r.OriginalText, Adv: r.PerturbedText})
		}
	}
	return explain.AgreementPass(m, pairs, explain.PassOptions{Method: e.Method, K: e.K, Gold: e.Label == "gold", Sample: e.Pairs,
		Seed: seed, Workers: workers, Journal: j.path, Resume: j.resume, ModelDigest: j.modelDigest})
}
