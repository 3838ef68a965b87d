package ag

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/tensor"
)

// GradCheck compares the analytic gradients of f's output with central
// finite differences for every input tensor. f builds the output from Vars
// wrapping inputs on the given tape; the scalar checked is Σ out·R for a
// fixed random R, so every output element takes part. It returns an error
// describing the worst element whose relative error exceeds tol.
func GradCheck(inputs []*tensor.Tensor, eps, tol float64, f func(t *Tape, in []*Var) *Var) error {
	build := func() (*Tape, []*Var, *Var) {
		t := NewTape()
		vs := make([]*Var, len(inputs))
		for i, x := range inputs {
			vs[i] = t.Leaf(x)
		}
		return t, vs, f(t, vs)
	}
	_, _, probe := build()
	r := rand.New(rand.NewSource(7))
	weights := make([]float32, len(probe.Data()))
	for i := range weights {
		weights[i] = float32(r.NormFloat64())
	}
	scalar := func() float64 {
		_, _, out := build()
		var s float64
		for i, v := range out.Data() {
			s += float64(v) * float64(weights[i])
		}
		return s
	}
	t, vs, out := build()
	SeedGrad(out, weights)
	t.BackwardFrom()
	for i, x := range inputs {
		for j := range x.Data {
			old := x.Data[j]
			x.Data[j] = old + float32(eps)
			up := scalar()
			x.Data[j] = old - float32(eps)
			down := scalar()
			x.Data[j] = old
			num := (up - down) / (2 * eps)
			var ana float64
			if vs[i].Grad != nil {
				ana = float64(vs[i].Grad.Data[j])
			}
			if d := math.Abs(num - ana); d > tol*math.Max(1, math.Abs(num)) {
				return fmt.Errorf("input %d element %d: analytic %.6g, numeric %.6g", i, j, ana, num)
			}
		}
	}
	return nil
}
