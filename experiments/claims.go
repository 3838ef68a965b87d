package experiments

import (
	"fmt"
	"math"
	"strings"

	"github.com/textarmor/textarmor/metrics"
)

// Claim is one claim of a paper checked on a table: what the paper
// claims, its numbers, ours over the trained instances, and the verdict
// of the claimed ordering (OrderVerdict on Difference: holds beyond two
// SE in the claimed direction, fails beyond two SE against it, tie in
// between). The tables write their claims into table.json ("claims"),
// which the reproduction report reads (Reproduction).
type Claim struct {
	Paper string `json:"paper"` // FTML, FLAT, ...
	Table string `json:"table"` // which table and block
	Claim string `json:"claim"` // the claimed ordering, in words
	// PaperValue is the paper's numbers for it; Ours ours, each side's
	// mean ± SD across the instances [min–max].
	PaperValue string `json:"paper_value,omitempty"`
	Ours       string `json:"ours"`
	// Difference is the claim's margin in its units (positive: the claim's
	// direction), its mean over instances and SE (metrics.Crossed when
	// the per-example results are there, else metrics.FromSeeds).
	Difference metrics.SeedEstimate `json:"difference"`
	// Paired says the SE comes from per-example results (false: from the
	// cells' own SEs).
	Paired  bool   `json:"paired"`
	Verdict string `json:"verdict"`
	// Deviations are what applies to this claim only (the table's own are
	// in table.json's "deviations").
	Deviations []string `json:"deviations,omitempty"`
}

// Seeds is the number of trained instances behind the claim.
func (c Claim) Seeds() int { return c.Difference.Seeds() }

// Line is the claim as a table's check line.
func (c Claim) Line() string {
	d := c.Difference
	unit := "SE"
	if c.Paired {
		unit = "paired SE"
	}
	over := fmt.Sprintf("%d seed%s", d.Seeds(), map[bool]string{true: "s"}[d.Seeds() != 1])
	if d.N > 0 {
		over += fmt.Sprintf(" × %d examples", d.N)
	}
	per := ""
	if d.Seeds() > 1 {
		s := d.Spread()
		per = fmt.Sprintf("; per seed %+.*f to %+.*f", digits(d.Mean), s.Min, digits(d.Mean), s.Max)
	}
	return fmt.Sprintf("%s: %s; margin %+.*f ± %.*f %s over %s%s: %s", c.Claim, c.Ours, digits(d.Mean), d.Mean, digits(d.Mean), d.SE, unit, over, per, c.Verdict)
}

// digits is how many decimals a value in its units is shown with:
// accuracies in points 1, agreements (below 1) 3.
func digits(v float64) int {
	if math.Abs(v) < 1 && v != 0 {
		return 3
	}
	return 1
}

// FormatAcross is a value over instances: mean ± SD [min–max], or the
// value alone for one instance.
func FormatAcross(a metrics.Across, prec int) string {
	if a.N <= 1 {
		return fmt.Sprintf("%.*f", prec, a.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f [%.*f–%.*f]", prec, a.Mean, prec, a.SD, prec, a.Min, prec, a.Max)
}

// newClaim fills a claim's difference and verdict.
func newClaim(base Claim, claim, paper, ours string, d metrics.SeedEstimate, paired bool) Claim {
	c := base
	c.Claim, c.PaperValue, c.Ours, c.Difference, c.Paired = claim, paper, ours, d, paired
	c.Verdict = OrderVerdict(d.Mean, d.SE)
	return c
}

// scaled is an estimate in other units (proportions to points: 100).
func scaled(e metrics.SeedEstimate, k float64) metrics.SeedEstimate {
	out := e
	out.Mean, out.SE, out.SeedSE, out.ExampleSE = k*e.Mean, k*e.SE, k*e.SeedSE, k*e.ExampleSE
	out.PerSeed = make([]float64, len(e.PerSeed))
	for i, v := range e.PerSeed {
		out.PerSeed[i] = k * v
	}
	return out
}

// shifted is an estimate moved by c (a claim against a bound: x ≥ y − c).
func shifted(e metrics.SeedEstimate, c float64) metrics.SeedEstimate {
	out := e
	out.Mean += c
	out.PerSeed = make([]float64, len(e.PerSeed))
	for i, v := range e.PerSeed {
		out.PerSeed[i] = v + c
	}
	return out
}

// trainSeedList are the training seeds of the instances.
func trainSeedList(base int64, offsets []int64) []int64 {
	out := make([]int64, len(offsets))
	for i, o := range offsets {
		out[i] = base + o
	}
	return out
}

// trainSeeds words them: "42, 43, 44".
func trainSeeds(base int64, offsets []int64) string {
	var parts []string
	for _, s := range trainSeedList(base, offsets) {
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, ", ")
}

// sideText is one side of a claim over the instances: "FTML 78.0 ± 1.2
// [76.7–79.3]".
func sideText(name string, values []float64, prec int) string {
	return name + " " + FormatAcross(metrics.AcrossSeeds(values), prec)
}

// correctString is per-example results as a cell stores them: '1' for a
// correct example, '0' for a wrong one.
func correctString(correct []bool) string {
	b := make([]byte, len(correct))
	for i, c := range correct {
		b[i] = '0'
		if c {
			b[i] = '1'
		}
	}
	return string(b)
}
