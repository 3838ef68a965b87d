package dataset

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/textarmor/textarmor/text"
)

// Stats describes a set of examples.
type Stats struct {
	Count int
	// LabelCounts[l] is the number of examples with label l (length: the
	// largest label + 1; negative labels are not counted).
	LabelCounts []int
	Tokens      int     // total tokens
	Mean        float64 // mean tokens per example
	// Token-length percentiles (nearest rank: the smallest length that at
	// least p% of the examples do not exceed), minimum and maximum.
	Min, P50, P90, P95, P99, Max int
	VocabSize                    int // distinct token texts
}

// ComputeStats tokenizes every example with tok (nil: whitespace) and
// summarises counts, lengths and vocabulary. A sentence pair's length is
// the tokens of both its texts.
func ComputeStats(ex []Example, tok text.Tokenizer) Stats {
	if tok == nil {
		tok = text.NewWhitespace()
	}
	s := Stats{Count: len(ex)}
	if len(ex) == 0 {
		return s
	}
	lengths := make([]int, len(ex))
	vocab := map[string]struct{}{}
	for i, e := range ex {
		if e.Label >= 0 {
			for len(s.LabelCounts) <= e.Label {
				s.LabelCounts = append(s.LabelCounts, 0)
			}
			s.LabelCounts[e.Label]++
		}
		toks := tok.Tokenize(e.Text)
		if e.Text2 != "" {
			toks = append(toks, tok.Tokenize(e.Text2)...)
		}
		lengths[i] = len(toks)
		s.Tokens += len(toks)
		for _, t := range toks {
			vocab[t.Text] = struct{}{}
		}
	}
	sort.Ints(lengths)
	pct := func(p int) int {
		k := (p*len(lengths) + 99) / 100 // ceil(p·N/100), 1-based rank
		return lengths[max(k, 1)-1]
	}
	s.Min, s.Max = lengths[0], lengths[len(lengths)-1]
	s.P50, s.P90, s.P95, s.P99 = pct(50), pct(90), pct(95), pct(99)
	s.Mean = float64(s.Tokens) / float64(len(ex))
	s.VocabSize = len(vocab)
	return s
}

// Format renders s as a small table; classes names the labels (labels
// without a name are shown as numbers).
func (s Stats) Format(classes []string) string {
	var sb strings.Builder
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "examples\t%d\n", s.Count)
	fmt.Fprintf(w, "tokens\t%d\n", s.Tokens)
	fmt.Fprintf(w, "vocabulary\t%d\n", s.VocabSize)
	fmt.Fprintf(w, "length\tmean %.1f  min %d  p50 %d  p90 %d  p95 %d  p99 %d  max %d\n",
		s.Mean, s.Min, s.P50, s.P90, s.P95, s.P99, s.Max)
	n := max(len(s.LabelCounts), len(classes))
	if n > 0 {
		fmt.Fprintf(w, "label\tcount\tshare\n")
	}
	for l := 0; l < n; l++ {
		name := fmt.Sprint(l)
		if l < len(classes) {
			name = classes[l]
		}
		c := 0
		if l < len(s.LabelCounts) {
			c = s.LabelCounts[l]
		}
		share := 0.0
		if s.Count > 0 {
			share = 100 * float64(c) / float64(s.Count)
		}
		fmt.Fprintf(w, "  %s\t%d\t%.1f%%\n", name, c, share)
	}
	w.Flush()
	return sb.String()
}
