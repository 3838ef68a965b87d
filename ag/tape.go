package ag

import (
	"fmt"
	"math/rand"

	"github.com/textarmor/textarmor/tensor"
)

// Var is a value in a computation and, after Backward, its gradient.
type Var struct {
	Value *tensor.Tensor
	// Grad has Value's shape; nil until something flows into it.
	Grad *tensor.Tensor
	// needsGrad is set on leaves that want a gradient and on every op
	// output that depends on one.
	needsGrad bool
	back      func()
	param     *Param
}

// Shape is a shortcut for v.Value.Shape.
func (v *Var) Shape() []int { return v.Value.Shape }

// Data is a shortcut for v.Value.Data.
func (v *Var) Data() []float32 { return v.Value.Data }

// NeedsGrad reports whether a gradient flows into v.
func (v *Var) NeedsGrad() bool {
	if v.param != nil {
		return !v.param.Frozen
	}
	return v.needsGrad
}

// grad returns v's gradient buffer, allocating it zeroed on first use. A
// dense write into a row-sparse parameter makes its whole gradient live.
func (v *Var) grad() []float32 {
	if v.param != nil && v.param.rowSparse {
		v.param.denseGrad = true
	}
	return v.gradRows()
}

// gradRows is grad without the dense mark, for ops that record the rows
// they touch.
func (v *Var) gradRows() []float32 {
	if v.Grad == nil {
		v.Grad = tensor.New(v.Value.Shape...)
	}
	return v.Grad.Data
}

// Item returns the single value of a one-element Var.
func (v *Var) Item() float32 {
	if len(v.Value.Data) != 1 {
		panic(fmt.Sprintf("ag.Item on shape %v", v.Value.Shape))
	}
	return v.Value.Data[0]
}

// Tape records operations for one forward/backward pass. It is not safe for
// concurrent use; run one tape per goroutine.
type Tape struct {
	nodes []*Var
	// Train switches dropout (and any other training-only behaviour) on.
	Train bool
	// Rng drives dropout and other random ops; seed it for determinism.
	Rng *rand.Rand
	// NoGrad records nothing: a pure inference pass with no backward cost.
	NoGrad bool
	// InputGradOnly treats every Param as a constant: only Leaf inputs get
	// gradients (attributions). No weight-gradient work is done and no
	// Param's Grad is touched, so goroutines may each run such a tape on
	// one shared model.
	InputGradOnly bool
}

// needs reports whether a gradient should flow into v on this tape.
func (t *Tape) needs(v *Var) bool {
	if t.InputGradOnly && v.param != nil {
		return false
	}
	return v.NeedsGrad()
}

// NewTape returns an empty tape in inference mode with a fixed-seed Rng.
func NewTape() *Tape { return &Tape{Rng: rand.New(rand.NewSource(1))} }

// Reset forgets the recorded operations so the tape can be reused.
func (t *Tape) Reset() {
	clear(t.nodes)
	t.nodes = t.nodes[:0]
}

// Len is the number of recorded operations.
func (t *Tape) Len() int { return len(t.nodes) }

// Const wraps a tensor that needs no gradient.
func (t *Tape) Const(x *tensor.Tensor) *Var { return &Var{Value: x} }

// Leaf wraps a tensor whose gradient the caller wants (an input
// perturbation, say); read it from Grad after Backward.
func (t *Tape) Leaf(x *tensor.Tensor) *Var { return &Var{Value: x, needsGrad: !t.NoGrad} }

// op records an output computed from inputs; back is kept only when some
// input needs a gradient.
func (t *Tape) op(out *tensor.Tensor, back func(out *Var), inputs ...*Var) *Var {
	v := &Var{Value: out}
	if t.NoGrad {
		return v
	}
	for _, in := range inputs {
		if in != nil && t.needs(in) {
			v.needsGrad = true
			break
		}
	}
	if v.needsGrad && back != nil {
		v.back = func() { back(v) }
		t.nodes = append(t.nodes, v)
	}
	return v
}

// Backward seeds loss (a scalar) with gradient 1 and propagates it back
// through every recorded operation.
func (t *Tape) Backward(loss *Var) {
	if len(loss.Value.Data) != 1 {
		panic(fmt.Sprintf("ag.Backward: loss has shape %v, want a scalar", loss.Value.Shape))
	}
	g := loss.grad()
	g[0] += 1
	t.BackwardFrom()
}

// BackwardFrom propagates gradients already placed in op outputs' Grad
// (set them with SeedGrad); use it for vector-Jacobian products.
func (t *Tape) BackwardFrom() {
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := t.nodes[i]
		if n.Grad != nil && n.back != nil {
			n.back()
		}
	}
}

// ResetGrads drops the gradients of the recorded operations' outputs,
// keeping those of leaves and parameters, so that a second Backward on
// the same tape propagates another loss through the same graph: the
// leaves and parameters then hold the sum of both losses' gradients, and
// a leaf's gradient copied in between is the first loss's alone (RAR's
// perturbation ascends the classification loss only, while the
// parameters learn from both). Every op's backward pass may run again
// after it; the second pass costs as much as the first for the part of
// the graph the second loss depends on.
func (t *Tape) ResetGrads() {
	for _, n := range t.nodes {
		// nil, not zero: a Reshape's input may share its output's buffer,
		// and a nil gradient lets BackwardFrom skip what the next loss
		// does not reach.
		n.Grad = nil
	}
}

// SeedGrad adds g into v's gradient before BackwardFrom.
func SeedGrad(v *Var, g []float32) {
	d := v.grad()
	for i := range d {
		d[i] += g[i]
	}
}

// Param is a trainable tensor that outlives tapes. Its Var joins any tape it
// is used on; gradients accumulate in Grad until ZeroGrad.
type Param struct {
	Name string
	*Var
	Frozen bool
	// rowSparse params (embedding tables) record which rows received a
	// gradient so clearing and norms touch only those.
	rowSparse bool
	denseGrad bool
	touched   []int32
	isTouched []bool
}

// NewParam wraps a tensor as a trainable parameter.
func NewParam(name string, x *tensor.Tensor) *Param {
	p := &Param{Name: name}
	p.Var = &Var{Value: x, param: p}
	return p
}

// SetRowSparse marks a 2-d parameter whose gradient touches few rows.
func (p *Param) SetRowSparse() {
	p.rowSparse = true
	p.isTouched = make([]bool, p.Value.Shape[0])
}

// RowSparse reports whether p tracks touched rows.
func (p *Param) RowSparse() bool { return p.rowSparse }

// TouchedRows lists the rows with a non-zero gradient since the last
// ZeroGrad. all is true when every row may be non-zero (a dense param, or a
// dense op wrote into this one).
func (p *Param) TouchedRows() (rows []int32, all bool) {
	if !p.rowSparse || p.denseGrad {
		return nil, true
	}
	return p.touched, false
}

func (p *Param) touch(row int32) {
	if !p.isTouched[row] {
		p.isTouched[row] = true
		p.touched = append(p.touched, row)
	}
}

// ZeroGrad clears the accumulated gradient.
func (p *Param) ZeroGrad() {
	if p.Grad == nil {
		return
	}
	if p.rowSparse && !p.denseGrad {
		d := p.Value.Shape[1]
		for _, r := range p.touched {
			clear(p.Grad.Data[int(r)*d : int(r+1)*d])
			p.isTouched[r] = false
		}
		p.touched = p.touched[:0]
		return
	}
	p.Grad.Zero()
	if p.rowSparse {
		for _, r := range p.touched {
			p.isTouched[r] = false
		}
		p.touched = p.touched[:0]
		p.denseGrad = false
	}
}
