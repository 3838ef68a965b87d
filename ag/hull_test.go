package ag

import (
	"fmt"
	"math/rand"
	"testing"
)

// LookupHull gives the values and table gradient of the composition it
// replaces (Lookup, reshape to groups, min and max over the group), with
// exact ties between different rows, a repeated id and a skipped id.
func TestLookupHullMatchesComposition(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	table := randT(r, 7, 5)
	copy(table.Data[6*5:7*5], table.Data[4*5:5*5]) // rows 4 and 6 tie everywhere
	ids := []int32{1, 4, 6, 0, 3, 3, 5, 2, 0, 4, 6, 2}
	const n, skip = 3, 2
	gLo, gHi := randT(r, 4, 5), randT(r, 4, 5)
	run := func(fused bool) (lo, hi, grad []float32) {
		tp := NewTape()
		w := NewParam("w", table.Clone())
		var l, u *Var
		if fused {
			l, u = tp.LookupHull(w.Var, ids, n, skip)
		} else {
			v := tp.Reshape(tp.Lookup(w.Var, ids, skip), 4, n, 5)
			u = tp.MaxOverTime(v, nil)
			l = tp.Scale(tp.MaxOverTime(tp.Scale(v, -1), nil), -1)
		}
		loss := tp.Add(tp.Sum(tp.Mul(l, tp.Const(gLo))), tp.Sum(tp.Mul(u, tp.Const(gHi))))
		tp.Backward(loss)
		return l.Value.Data, u.Value.Data, w.Grad.Data
	}
	lo1, hi1, g1 := run(true)
	lo0, hi0, g0 := run(false)
	sameValues(t, "fused vs composition", 1e-6, map[string][2][]float32{"lo": {lo1, lo0}, "hi": {hi1, hi0}, "grad": {g1, g0}})
	for k := 0; k < 5; k++ {
		if g1[skip*5+k] != 0 {
			t.Fatalf("skipped row received gradient %v", g1[skip*5+k])
		}
		if g1[6*5+k] != 0 { // tied with row 4, which comes first in its group
			t.Fatalf("row 6 received gradient %v though row 4 wins its ties", g1[6*5+k])
		}
	}
}

// Conv1DProjectedRows equals gathering the rows to the positions and
// running Conv1DProjected, in values and gradients, dense and pooled.
func TestConv1DProjectedRowsMatchesGathered(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const b, l, width, f, u = 3, 9, 3, 4, 6
	y, bias := randT(r, u, width*f), randT(r, f)
	rows := make([]int, b*l)
	for p := range rows {
		rows[p] = r.Intn(u)
	}
	for _, pool := range []bool{false, true} {
		run := func(fused bool) (out, gy, gb []float32) {
			tp := NewTape()
			py, pb := NewParam("y", y.Clone()), NewParam("b", bias.Clone())
			var o *Var
			if fused {
				o = tp.Conv1DProjectedRows(py.Var, rows, b, l, pb.Var, width)
			} else {
				o = tp.Conv1DProjected(tp.Reshape(tp.Gather(py.Var, rows), b, l, width*f), pb.Var, width)
			}
			if pool {
				o = tp.MaxOverTime(o, []int{7, 9, 5})
			}
			w := randT(rand.New(rand.NewSource(9)), o.Shape()...)
			tp.Backward(tp.Sum(tp.Mul(o, tp.Const(w))))
			return o.Value.Data, py.Grad.Data, pb.Grad.Data
		}
		o1, gy1, gb1 := run(true)
		o0, gy0, gb0 := run(false)
		sameValues(t, fmt.Sprintf("pool %v, rows vs gathered", pool), 1e-5,
			map[string][2][]float32{"out": {o1, o0}, "grad y": {gy1, gy0}, "grad bias": {gb1, gb0}})
	}
}

// sameValues fails when any pair of slices differs by more than tol.
func sameValues(t *testing.T, what string, tol float32, pairs map[string][2][]float32) {
	t.Helper()
	for name, p := range pairs {
		if len(p[0]) != len(p[1]) {
			t.Fatalf("%s, %s: %d values against %d", what, name, len(p[0]), len(p[1]))
		}
		for i := range p[1] {
			if d := p[0][i] - p[1][i]; d > tol || d < -tol {
				t.Fatalf("%s, %s[%d]: %v against %v", what, name, i, p[0][i], p[1][i])
			}
		}
	}
}
