package metrics

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Report summarises predictions against gold labels. Per-class slices are
// indexed like Classes.
type Report struct {
	N         int       `json:"n"`
	Accuracy  float64   `json:"accuracy"`
	MacroF1   float64   `json:"macro_f1"`
	Classes   []string  `json:"classes"`
	Precision []float64 `json:"precision"`
	Recall    []float64 `json:"recall"`
	F1        []float64 `json:"f1"`
	Support   []int     `json:"support"`
	// Confusion[g][p] counts examples of gold class g predicted as p.
	Confusion [][]int `json:"confusion"`
}

// Classification compares pred with gold, both label indices into classes.
//
// Undefined ratios are 0, as with scikit-learn's zero_division=0: a class
// never predicted has precision 0, a class absent from gold has recall 0,
// and F1 is 0 when precision+recall is 0. MacroF1 is the unweighted mean of
// the per-class F1 over all classes, including ones absent from gold (again
// as scikit-learn does when given the full label list). With no examples,
// Accuracy is 0. Every float is finite, so a Report always encodes as JSON.
func Classification(gold, pred []int, classes []string) (Report, error) {
	k := len(classes)
	if k == 0 {
		return Report{}, errors.New("metrics: no classes")
	}
	if len(gold) != len(pred) {
		return Report{}, fmt.Errorf("metrics: %d gold labels but %d predictions", len(gold), len(pred))
	}
	r := Report{
		N:         len(gold),
		Classes:   append([]string(nil), classes...),
		Precision: make([]float64, k),
		Recall:    make([]float64, k),
		F1:        make([]float64, k),
		Support:   make([]int, k),
		Confusion: make([][]int, k),
	}
	for i := range r.Confusion {
		r.Confusion[i] = make([]int, k)
	}
	correct := 0
	for i, g := range gold {
		p := pred[i]
		if g < 0 || g >= k {
			return Report{}, fmt.Errorf("metrics: gold label %d at index %d outside [0,%d)", g, i, k)
		}
		if p < 0 || p >= k {
			return Report{}, fmt.Errorf("metrics: predicted label %d at index %d outside [0,%d)", p, i, k)
		}
		r.Confusion[g][p]++
		if g == p {
			correct++
		}
	}
	if r.N > 0 {
		r.Accuracy = float64(correct) / float64(r.N)
	}
	for c := range k {
		tp := r.Confusion[c][c]
		predicted := 0
		for g := range k {
			predicted += r.Confusion[g][c]
		}
		for p := range k {
			r.Support[c] += r.Confusion[c][p]
		}
		r.Precision[c] = ratio(tp, predicted)
		r.Recall[c] = ratio(tp, r.Support[c])
		if s := r.Precision[c] + r.Recall[c]; s > 0 {
			r.F1[c] = 2 * r.Precision[c] * r.Recall[c] / s
		}
		r.MacroF1 += r.F1[c]
	}
	r.MacroF1 /= float64(k)
	return r, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Format renders the report as a plain-text table: the headline numbers,
// per-class precision/recall/F1/support, and the confusion matrix with
// gold classes as rows and predicted classes as columns.
func (r Report) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d  accuracy=%.4f  macro-F1=%.4f\n\n", r.N, r.Accuracy, r.MacroF1)
	// Numbers align right; names are padded by hand to align left.
	w := len("gold\\pred")
	for _, c := range r.Classes {
		w = max(w, utf8.RuneCountInString(c))
	}
	name := func(s string) string { return s + strings.Repeat(" ", w-utf8.RuneCountInString(s)) }
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tprecision\trecall\tf1\tsupport\t\n", name("class"))
	for i, c := range r.Classes {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t%d\t\n", name(c), at(r.Precision, i), at(r.Recall, i), at(r.F1, i), atInt(r.Support, i))
	}
	tw.Flush()
	b.WriteString("\nconfusion (rows: gold, columns: predicted)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t", name("gold\\pred"))
	for _, c := range r.Classes {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for g, c := range r.Classes {
		fmt.Fprintf(tw, "%s\t", name(c))
		for p := range r.Classes {
			n := 0
			if g < len(r.Confusion) {
				n = atInt(r.Confusion[g], p)
			}
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	return b.String()
}

// at and atInt tolerate a Report decoded from incomplete JSON.
func at(x []float64, i int) float64 {
	if i < len(x) {
		return x[i]
	}
	return 0
}

func atInt(x []int, i int) int {
	if i < len(x) {
		return x[i]
	}
	return 0
}
