package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
)

// explainFlags are `attack --explain ig|lime`: interpretation agreement
// between each successful attack's original and adversarial text (FLAT spec
// §9.2: Kendall's τ-b and top-k intersection, position-aligned, averaged
// over classes and then over pairs).
type explainFlags struct {
	method string
	k      int
	label  string // all (spec §12 F11 default) or gold (F11's alternative)
	pairs  int    // explain a seeded uniform sample of this many pairs (0 = all)

	// journal, when set, keeps each pair's scores in this file as they are
	// made (explainjournal.go); resume reuses the pairs it holds; model is
	// the weights digest recorded in it.
	journal string
	resume  bool
	model   string
}

func (e *explainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.method, "explain", "", "after the attack, compare attributions of each successful attack's original and adversarial text: ig or lime (Kendall τ and top-k intersection, FLAT spec §9.2)")
	fs.IntVar(&e.k, "explain-k", 5, "with --explain: k of the top-k intersection")
	fs.IntVar(&e.pairs, "explain-pairs", 0, "with --explain: explain a seeded uniform sample of this many successful attacks (FLAT spec §9.2 samples 1,000 for LIME); 0 = all")
	fs.StringVar(&e.label, "explain-label", "all", "with --explain: all = explain every class and average over classes, then pairs (FLAT spec §9.2, F11's default); gold = explain each pair's gold label, average per gold class, then over classes (F11's alternative)")
}

func (e *explainFlags) check() error {
	switch e.method {
	case "", "ig", "lime":
	default:
		return usageError{fmt.Errorf("--explain %q: want ig or lime", e.method)}
	}
	switch e.label {
	case "", "all", "gold":
	default:
		return usageError{fmt.Errorf("--explain-label %q: want all or gold", e.label)}
	}
	return nil
}

// numbers are the range checks of --explain-k and --explain-pairs.
func (e *explainFlags) numbers() []numRule {
	return []numRule{
		{e.k >= 1, "explain-k", e.k, "at least 1"},
		{e.pairs >= 0, "explain-pairs", e.pairs, "≥ 0 (0 = all)"},
	}
}

// labelMode is --explain-label with its default filled in (flags built
// in code may leave it empty).
func (e *explainFlags) labelMode() string {
	if e.label == "" {
		return "all"
	}
	return e.label
}

// run explains every successful result's two texts with every class
// (explain.AgreementPass).
func (e *explainFlags) run(m *model.Model, rs []attack.Result, seed int64, workers int) (*explain.Agreement, error) {
	var pairs []explain.Pair
	for _, r := range rs {
		if r.Type == attack.Successful && r.PerturbedText != r.OriginalText {
			pairs = append(pairs, explain.Pair{Index: r.Index, Gold: r.GroundTruth, Orig: r.OriginalText, Adv: r.PerturbedText})
		}
	}
	return explain.AgreementPass(m, pairs, explain.PassOptions{Method: e.method, K: e.k, Gold: e.label == "gold", Sample: e.pairs,
		Seed: seed, Workers: workers, Journal: e.journal, Resume: e.resume, ModelDigest: e.model})
}

// printAgreement writes the agreement of attack --explain.
func printAgreement(w io.Writer, a *explain.Agreement) {
	how := "class-averaged, position-aligned"
	if a.Label == "gold" {
		how = "gold label, averaged per gold class, position-aligned"
	}
	sample := ""
	if a.SampledFrom > 0 {
		sample = fmt.Sprintf(", a seeded sample of the %d", a.SampledFrom)
	}
	fmt.Fprintf(w, "  %s agreement over %d successful attacks (%s%s):\n", a.Method, a.Pairs, how, sample)
	fmt.Fprintf(w, "    kendall tau:            %6.4f ± %.4f SE (%d pairs; %d undefined class τ skipped)\n", a.KendallTau, a.KendallTauSE, a.TauPairs, a.TauUndefined)
	fmt.Fprintf(w, "    top-%d intersection:     %6.4f ± %.4f SE\n", a.K, a.TopK, a.TopKSE)
	if a.LengthMismatch > 0 {
		fmt.Fprintf(w, "    length mismatches:      %d (compared on the shorter length)\n", a.LengthMismatch)
	}
}
