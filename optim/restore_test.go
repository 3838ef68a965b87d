package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// Restore copies every param and the optimizer's state, and refuses a
// missing tensor, a tensor of another shape or state of an unknown param
// before it changes anything.
func TestRestore(t *testing.T) {
	mk := func() []*ag.Param {
		return []*ag.Param{ag.NewParam("w", tensor.From([]float32{1, 2, 3, 4}, 2, 2)), ag.NewParam("b", tensor.From([]float32{5, 6}, 2))}
	}
	src := mk()
	for _, p := range src {
		p.Grad = tensor.New(p.Value.Shape...)
		for i := range p.Grad.Data {
			p.Grad.Data[i] = 0.5
		}
	}
	a := NewAdam(AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	a.Step(src)
	weights := map[string]*tensor.Tensor{"w": src[0].Value, "b": src[1].Value, "other": tensor.New(3)}
	dst := mk()
	b := NewAdam(AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	if err := Restore(dst, weights, b, a.State()); err != nil {
		t.Fatal(err)
	}
	for i := range dst {
		for j, v := range dst[i].Value.Data {
			if v != src[i].Value.Data[j] {
				t.Fatalf("%s[%d] = %v, want %v", dst[i].Name, j, v, src[i].Value.Data[j])
			}
		}
	}
	if got, want := b.State()["w.exp_avg"].Data[0], a.State()["w.exp_avg"].Data[0]; got != want {
		t.Errorf("state not restored: %v, want %v", got, want)
	}
	for name, c := range map[string]struct {
		weights map[string]*tensor.Tensor
		state   map[string]*tensor.Tensor
		want    string
	}{
		"missing":       {map[string]*tensor.Tensor{"w": src[0].Value}, a.State(), "tensor b missing"},
		"shape":         {map[string]*tensor.Tensor{"w": tensor.New(4), "b": src[1].Value}, a.State(), "tensor w missing or of another shape"},
		"unknown state": {weights, map[string]*tensor.Tensor{"x.exp_avg": tensor.New(2)}, "unknown param"},
	} {
		fresh := mk()
		err := Restore(fresh, c.weights, NewAdam(AdamConfig{LR: 0.1}), c.state)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if fresh[0].Value.Data[0] != 1 {
			t.Errorf("%s: params changed before the error", name)
		}
	}
}

// LRScale multiplies a named param's step: Adam's first step moves every
// element by lr (its sign aside), so the scaled param moves 10× as far.
func TestAdamLRScale(t *testing.T) {
	ps := []*ag.Param{ag.NewParam("emb", tensor.From([]float32{1, 1}, 2)), ag.NewParam("w", tensor.From([]float32{1, 1}, 2))}
	for _, p := range ps {
		p.Grad = tensor.From([]float32{0.3, -2}, 2)
	}
	a := NewAdam(AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LRScale: func(name string) float64 {
		return map[string]float64{"emb": 10}[name]
	}})
	a.Step(ps)
	for i := range 2 {
		de, dw := 1-ps[0].Value.Data[i], 1-ps[1].Value.Data[i]
		if math.Abs(float64(de/dw)-10) > 1e-3 || math.Abs(math.Abs(float64(dw))-0.01) > 1e-5 {
			t.Errorf("element %d: scaled step %v, plain %v; want 10× and 0.01", i, de, dw)
		}
	}
}
