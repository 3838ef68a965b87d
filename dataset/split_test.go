package dataset

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
)

// synth makes n examples; label i%k unless counts are given.
func synth(counts ...int) []Example {
	var out []Example
	for l, c := range counts {
		for i := 0; i < c; i++ {
			out = append(out, Example{Text: fmt.Sprintf("l%d-%d", l, i), Label: l})
		}
	}
	// Interleave deterministically so labels are not in blocks.
	for i := range out {
		j := (i * 7) % len(out)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func labelCounts(ex []Example) map[int]int {
	m := map[int]int{}
	for _, e := range ex {
		m[e.Label]++
	}
	return m
}

func TestStratifiedSplitCounts(t *testing.T) {
	trec := synth(1162, 1250, 86, 1223, 835, 896) // TREC.train in Kim's order
	tests := []struct {
		name string
		ex   []Example
		n    int // held out via StratifiedSplitN; -1: use frac
		frac float64
		want map[int]int // held-out counts per label
	}{
		{"even 10%", synth(50, 50), -1, 0.1, map[int]int{0: 5, 1: 5}},
		{"largest remainder gives exact total", trec, 452, 0, map[int]int{0: 96, 1: 104, 2: 7, 3: 102, 4: 69, 5: 74}},
		{"MR 10%", synth(5331, 5331), -1, 0.1, map[int]int{0: 533, 1: 533}},
		{"MR dev", synth(4798, 4798), -1, 0.1, map[int]int{0: 480, 1: 480}},
		{"remainder tie to smaller label", synth(1, 1, 1), 1, 0, map[int]int{0: 1}},
		{"frac 0", synth(3, 3), -1, 0, map[int]int{}},
		{"frac 1", synth(3, 4), -1, 1, map[int]int{0: 3, 1: 4}},
		{"frac > 1 clamps", synth(3, 4), -1, 7, map[int]int{0: 3, 1: 4}},
		{"frac < 0 clamps", synth(3, 4), -1, -1, map[int]int{}},
		{"NaN", synth(3, 4), -1, math.NaN(), map[int]int{}},
		{"n > len clamps", synth(2, 1), 10, 0, map[int]int{0: 2, 1: 1}},
		{"n < 0 clamps", synth(2, 1), -5, 0, map[int]int{}},
		{"sparse and negative labels", []Example{{Text: "a", Label: -1}, {Text: "b", Label: 5}, {Text: "c", Label: 5}, {Text: "d", Label: -1}}, 2, 0, map[int]int{-1: 1, 5: 1}},
		{"empty", nil, 3, 0, map[int]int{}},
	}
	for _, tc := range tests {
		var a, b []Example
		if tc.n == -1 {
			a, b = StratifiedSplit(tc.ex, tc.frac, 1)
		} else {
			a, b = StratifiedSplitN(tc.ex, tc.n, 1)
		}
		if got := labelCounts(b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: held-out counts %v, want %v", tc.name, got, tc.want)
		}
		if len(a)+len(b) != len(tc.ex) {
			t.Errorf("%s: %d + %d != %d", tc.name, len(a), len(b), len(tc.ex))
		}
		checkPartition(t, tc.name, tc.ex, a, b)
	}
}

// checkPartition asserts that a and b are disjoint, cover ex, and keep the
// input order.
func checkPartition(t *testing.T, name string, ex, a, b []Example) {
	t.Helper()
	i, j := 0, 0
	for _, e := range ex {
		switch {
		case i < len(a) && a[i] == e:
			i++
		case j < len(b) && b[j] == e:
			j++
		default:
			t.Fatalf("%s: %v missing or out of order", name, e)
		}
	}
	if i != len(a) || j != len(b) {
		t.Fatalf("%s: extra examples", name)
	}
}

func TestStratifiedSplitDeterministic(t *testing.T) {
	ex := synth(30, 20, 10)
	a1, b1 := StratifiedSplit(ex, 0.2, 42)
	a2, b2 := StratifiedSplit(ex, 0.2, 42)
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(b1, b2) {
		t.Error("same seed, different split")
	}
	_, b3 := StratifiedSplit(ex, 0.2, 43)
	if reflect.DeepEqual(b1, b3) {
		t.Error("different seeds, same split")
	}
	// The input is not modified.
	if !reflect.DeepEqual(ex, synth(30, 20, 10)) {
		t.Error("input modified")
	}
}

// TestStratifiedSplitGolden pins the recipe: stored splits (MR, TREC dev, AG
// News) depend on it, so any change must be deliberate.
func TestStratifiedSplitGolden(t *testing.T) {
	var ex []Example
	for i := 0; i < 20; i++ {
		ex = append(ex, Example{Text: fmt.Sprint(i), Label: i % 3})
	}
	_, b := StratifiedSplitN(ex, 6, 1)
	var got []string
	for _, e := range b {
		got = append(got, e.Text)
	}
	want := []string{"8", "11", "12", "13", "15", "16"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("held out %q, want %q", got, want)
	}
}

// TestSeededSubset: n examples, the same ones for the same seed, no
// repeats; all of them (permuted) for n = 0.
func TestSeededSubset(t *testing.T) {
	ex := synth(30, 20)
	a, b := SeededSubset(ex, 10, 7), SeededSubset(ex, 10, 7)
	if len(a) != 10 || !slices.Equal(a, b) {
		t.Fatalf("subset %v / %v", a, b)
	}
	seen := map[string]bool{}
	for _, e := range a {
		if seen[e.Text] {
			t.Fatalf("%q drawn twice", e.Text)
		}
		seen[e.Text] = true
	}
	if all := SeededSubset(ex, 0, 7); len(all) != len(ex) {
		t.Fatalf("n = 0 gave %d of %d", len(all), len(ex))
	}
}
