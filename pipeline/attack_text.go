package pipeline

import (
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/metrics"
)

// WriteText writes the report's text summary (what `textarmor attack`
// prints).
func (rep *AttackReport) WriteText(w io.Writer) {
	sum := rep.Summary
	fmt.Fprintf(w, "attack %s on %s/%s, model %s, %d examples\n", rep.Recipe, rep.Dataset, rep.Split, rep.Model, sum.N)
	fmt.Fprintf(w, "  successful / failed / skipped: %d / %d / %d\n", sum.Successful, sum.Failed, sum.Skipped)
	fmt.Fprintf(w, "  verified successes:     %d/%d (each written text read back and re-classified)\n", sum.Verified, sum.Successful)
	if sum.Mismatched > 0 {
		fmt.Fprintf(w, "  MISMATCHED successes:   %d: their written text does not fool the model (a bug; indices %s)\n",
			sum.Mismatched, firstIndices(rep.Mismatched(), 20))
	}
	fmt.Fprintf(w, "  original accuracy:      %6.2f%%\n", 100*sum.OriginalAccuracy)
	fmt.Fprintf(w, "  accuracy under attack:  %6.2f%% ± %.2f SE\n", 100*sum.AccuracyUnderAttack, 100*metrics.BinomialSE(sum.AccuracyUnderAttack, sum.N))
	fmt.Fprintf(w, "  attack success rate:    %6.2f%%\n", 100*sum.AttackSuccessRate)
	fmt.Fprintf(w, "  avg perturbed words:    %6.2f%%\n", sum.AvgPerturbedWordPct)
	fmt.Fprintf(w, "  avg words per input:    %6.1f\n", sum.AvgWords)
	fmt.Fprintf(w, "  avg queries:            %6.1f distinct inputs scored; %.1f with repeats (TextAttack's count)\n", sum.AvgQueries, sum.AvgQueriesWithRepeats)
	fmt.Fprintf(w, "  seconds per example:    %8.3f (wall %.1fs)\n", sum.SecondsPerExample, rep.Wall.Seconds())
	if rep.Truncated > 0 {
		fmt.Fprintf(w, "  truncated texts:        %d (the model reads their first %d tokens)\n", rep.Truncated, rep.MaxLen)
	}
	for _, p := range rep.postPass() {
		fmt.Fprintf(w, "  kept by %s: %d of %d substituted texts (%.1f%%)\n", p.Constraint, p.Passed, p.Checked, 100*float64(p.Passed)/float64(max(p.Checked, 1)))
	}
	if rep.Agreement != nil {
		writeAgreement(w, rep.Agreement)
	}
	for _, d := range rep.Deviations {
		fmt.Fprintf(w, "  deviation: %s\n", d)
	}
}

// firstIndices lists at most limit indices, with " …" when there are more.
func firstIndices(ix []int, limit int) string {
	var out []string
	for i, x := range ix {
		if i == limit {
			return strings.Join(out, " ") + " …"
		}
		out = append(out, fmt.Sprint(x))
	}
	return strings.Join(out, " ")
}

// writeAgreement writes the agreement of attack --explain.
func writeAgreement(w io.Writer, a *explain.Agreement) {
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
