package metrics

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestClassification(t *testing.T) {
	cases := []struct {
		name          string
		gold, pred    []int
		classes       []string
		acc, macro    float64
		prec, rec, f1 []float64
		support       []int
		confusion     [][]int
	}{
		{
			// Worked by hand: column sums 3,4,3; row sums 4,3,3.
			name:    "three-class",
			gold:    []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2},
			pred:    []int{0, 0, 1, 2, 1, 1, 0, 2, 2, 1},
			classes: []string{"neg", "neu", "pos"},
			acc:     0.6,
			prec:    []float64{2.0 / 3, 2.0 / 4, 2.0 / 3},
			rec:     []float64{2.0 / 4, 2.0 / 3, 2.0 / 3},
			f1:      []float64{4.0 / 7, 4.0 / 7, 2.0 / 3},
			macro:   38.0 / 63,
			support: []int{4, 3, 3},
			confusion: [][]int{
				{2, 1, 1},
				{1, 2, 0},
				{0, 1, 2},
			},
		},
		{
			// Class c is neither gold nor predicted: its P, R and F1 are
			// 0 and it still counts in the macro mean (sklearn gives 4/9).
			name:      "absent-class",
			gold:      []int{0, 1, 1},
			pred:      []int{0, 0, 1},
			classes:   []string{"a", "b", "c"},
			acc:       2.0 / 3,
			prec:      []float64{0.5, 1, 0},
			rec:       []float64{1, 0.5, 0},
			f1:        []float64{2.0 / 3, 2.0 / 3, 0},
			macro:     4.0 / 9,
			support:   []int{1, 2, 0},
			confusion: [][]int{{1, 0, 0}, {1, 1, 0}, {0, 0, 0}},
		},
		{
			// Class 1 is predicted but never gold: precision 0/1, recall
			// 0/0 := 0.
			name:      "predicted-never-gold",
			gold:      []int{0, 0},
			pred:      []int{0, 1},
			classes:   []string{"x", "y"},
			acc:       0.5,
			prec:      []float64{1, 0},
			rec:       []float64{0.5, 0},
			f1:        []float64{2.0 / 3, 0},
			macro:     1.0 / 3,
			support:   []int{2, 0},
			confusion: [][]int{{1, 1}, {0, 0}},
		},
		{
			name:      "perfect",
			gold:      []int{1, 0, 1},
			pred:      []int{1, 0, 1},
			classes:   []string{"x", "y"},
			acc:       1,
			prec:      []float64{1, 1},
			rec:       []float64{1, 1},
			f1:        []float64{1, 1},
			macro:     1,
			support:   []int{1, 2},
			confusion: [][]int{{1, 0}, {0, 2}},
		},
		{
			name:      "empty",
			classes:   []string{"x", "y"},
			prec:      []float64{0, 0},
			rec:       []float64{0, 0},
			f1:        []float64{0, 0},
			support:   []int{0, 0},
			confusion: [][]int{{0, 0}, {0, 0}},
		},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	nearAll := func(a, b []float64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !near(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Classification(c.gold, c.pred, c.classes)
			if err != nil {
				t.Fatal(err)
			}
			if r.N != len(c.gold) || !near(r.Accuracy, c.acc) || !near(r.MacroF1, c.macro) {
				t.Errorf("n=%d acc=%v macroF1=%v, want %d %v %v", r.N, r.Accuracy, r.MacroF1, len(c.gold), c.acc, c.macro)
			}
			if !nearAll(r.Precision, c.prec) || !nearAll(r.Recall, c.rec) || !nearAll(r.F1, c.f1) {
				t.Errorf("P=%v R=%v F1=%v, want %v %v %v", r.Precision, r.Recall, r.F1, c.prec, c.rec, c.f1)
			}
			if !reflect.DeepEqual(r.Support, c.support) || !reflect.DeepEqual(r.Confusion, c.confusion) {
				t.Errorf("support %v confusion %v, want %v %v", r.Support, r.Confusion, c.support, c.confusion)
			}
			if !reflect.DeepEqual(r.Classes, c.classes) {
				t.Errorf("classes %v", r.Classes)
			}
		})
	}
}

func TestClassificationErrors(t *testing.T) {
	cases := []struct {
		name       string
		gold, pred []int
		classes    []string
		want       string
	}{
		{"length-mismatch", []int{0, 1}, []int{0}, []string{"a", "b"}, "2 gold labels but 1 predictions"},
		{"gold-too-big", []int{0, 2}, []int{0, 1}, []string{"a", "b"}, "gold label 2 at index 1"},
		{"pred-negative", []int{0, 1}, []int{-1, 1}, []string{"a", "b"}, "predicted label -1 at index 0"},
		{"no-classes", nil, nil, nil, "no classes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Classification(c.gold, c.pred, c.classes)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestReportJSONAndFormat(t *testing.T) {
	r, err := Classification([]int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}, []int{0, 0, 1, 2, 1, 1, 0, 2, 2, 1}, []string{"neg", "neu", "pos"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"n", "accuracy", "macro_f1", "classes", "precision", "recall", "f1", "support", "confusion"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if len(m) != 9 {
		t.Errorf("JSON has %d keys, want 9: %s", len(m), b)
	}

	out := r.Format()
	// Each pattern is one line of the table, columns separated by spaces.
	for _, pat := range []string{
		`n=10  accuracy=0\.6000  macro-F1=0\.6032`,
		`\n\s*neg\s+0\.6667\s+0\.5000\s+0\.5714\s+4\s*\n`,
		`\n\s*neu\s+0\.5000\s+0\.6667\s+0\.5714\s+3\s*\n`,
		`\n\s*gold\\pred\s+neg\s+neu\s+pos\s*\n`,
		`\n\s*neg\s+2\s+1\s+1\s*\n`,
		`\n\s*pos\s+0\s+1\s+2\s*\n`,
	} {
		if !regexp.MustCompile(pat).MatchString(out) {
			t.Errorf("Format output lacks %s:\n%s", pat, out)
		}
	}
}

func TestCosine(t *testing.T) {
	for _, c := range []struct {
		a, b []float32
		want float64
		ok   bool
	}{
		{[]float32{1, 0}, []float32{0, 2}, 0, true},
		{[]float32{1, 1}, []float32{2, 2}, 1, true},
		{[]float32{1, 2}, []float32{-1, -2}, -1, true},
		{[]float32{3, 4}, []float32{4, 3}, 24.0 / 25, true},
		{[]float32{0, 0}, []float32{1, 2}, 0, false},
	} {
		got, ok := Cosine(c.a, c.b)
		if ok != c.ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %g, %v; want %g, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}
