package optim

import (
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// SGD is stochastic gradient descent with optional momentum and L2 weight
// decay, with PyTorch's update rule (dampening 0, no Nesterov):
//
//	g ← g + wd·θ;  b ← μb + g;  θ ← θ − lr·b
//
// (b starts at zero, so the first step uses b = g as PyTorch does.)
type SGD struct {
	lr, momentum, weightDecay float64
	buf                       map[string]*tensor.Tensor
	seen                      map[string]struct{}
}

// NewSGD returns an SGD optimizer; momentum 0 is plain SGD. Negative
// values are programming errors and panic.
func NewSGD(lr, momentum, weightDecay float64) *SGD {
	if !(lr >= 0) || !(momentum >= 0) || !(weightDecay >= 0) {
		panic(fmt.Sprintf("optim: SGD lr %v, momentum %v, weight decay %v", lr, momentum, weightDecay))
	}
	return &SGD{lr: lr, momentum: momentum, weightDecay: weightDecay,
		buf: map[string]*tensor.Tensor{}, seen: map[string]struct{}{}}
}

// SetLR sets the learning rate for the following steps.
func (s *SGD) SetLR(lr float64) { s.lr = lr }

// LR returns the learning rate.
func (s *SGD) LR() float64 { return s.lr }

// Step updates every param that is not Frozen and has a gradient.
func (s *SGD) Step(params []*ag.Param) {
	checkParams(params, s.seen)
	lr, mu, wd := float32(s.lr), float32(s.momentum), float32(s.weightDecay)
	for _, p := range params {
		if p.Frozen || p.Grad == nil {
			continue
		}
		w, g := p.Value.Data, p.Grad.Data
		if mu == 0 {
			tensor.ParallelFor(len(w), 4, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					w[i] -= lr * (g[i] + wd*w[i])
				}
			})
			continue
		}
		b := s.buf[p.Name]
		if b == nil {
			b = tensor.New(p.Value.Shape...)
			s.buf[p.Name] = b
		} else if !sameShape(b.Shape, p.Value.Shape) {
			panic(fmt.Sprintf("optim: param %q has shape %v but its momentum buffer has %v", p.Name, p.Value.Shape, b.Shape))
		}
		bd := b.Data
		tensor.ParallelFor(len(w), 8, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				bi := mu*bd[i] + (g[i] + wd*w[i])
				bd[i] = bi
				w[i] -= lr * bi
			}
		})
	}
}

// State returns a copy of the momentum buffers, keyed
// "<name>.momentum_buffer" (empty without momentum).
func (s *SGD) State() map[string]*tensor.Tensor {
	out := make(map[string]*tensor.Tensor, len(s.buf))
	for name, b := range s.buf {
		out[name+"."+fieldMomentum] = b.Clone()
	}
	return out
}

// LoadState replaces the momentum buffers with a copy of st (from State).
// Nothing is changed if a key is not a momentum buffer, a buffer is
// malformed or its shape differs from a param already seen, or buffers are
// given to an SGD without momentum.
func (s *SGD) LoadState(st map[string]*tensor.Tensor) error {
	if s.momentum == 0 && len(st) > 0 {
		return fmt.Errorf("optim: SGD without momentum has no state, got %d entries", len(st))
	}
	next := make(map[string]*tensor.Tensor, len(st))
	for _, key := range sortedKeys(st) {
		name, field, ok := splitKey(key)
		if !ok || field != fieldMomentum {
			return fmt.Errorf("optim: SGD state key %q is not <param>.%s", key, fieldMomentum)
		}
		t := st[key]
		if err := checkTensor(key, t); err != nil {
			return err
		}
		if old := s.buf[name]; old != nil && !sameShape(old.Shape, t.Shape) {
			return fmt.Errorf("optim: SGD state %q has shape %v, the param has %v", key, t.Shape, old.Shape)
		}
		next[name] = t.Clone()
	}
	s.buf = next
	return nil
}
