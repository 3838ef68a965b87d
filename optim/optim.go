package optim

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// Optimizer updates parameters from their accumulated gradients.
type Optimizer interface {
	// Step applies one update to every param that is not Frozen and has a
	// gradient; the others are skipped and their state left untouched.
	// Params are identified by Name, which must be unique and non-empty.
	Step(params []*ag.Param)
	SetLR(lr float64)
	LR() float64
	// State returns a deep copy of the optimizer's per-parameter state,
	// keyed "<param name>.<field>", e.g. for a checkpoint.
	State() map[string]*tensor.Tensor
	// LoadState replaces the state with a copy of one from State. It
	// checks that the keys and shapes are consistent, and that they agree
	// with any param this optimizer has already stepped; MatchState checks
	// against a model's params before any step.
	LoadState(map[string]*tensor.Tensor) error
}

// ZeroGrad clears the gradients of params (cheaply, for row-sparse ones).
func ZeroGrad(params []*ag.Param) {
	for _, p := range params {
		p.ZeroGrad()
	}
}

// ClipGradNorm computes the L2 norm of all non-frozen params' gradients
// taken together and, if it exceeds maxNorm, scales them all by
// maxNorm/(norm+1e-6) as PyTorch's clip_grad_norm_ does. Only the touched
// rows of row-sparse params are read or scaled (the rest are zero). It
// returns the norm before clipping. maxNorm <= 0 only measures. A
// non-finite norm leaves the gradients unscaled, so the caller can see it
// and skip the step rather than have every gradient turned into NaN.
func ClipGradNorm(params []*ag.Param, maxNorm float64) (norm float64) {
	var sum float64
	for _, p := range params {
		if p.Frozen || p.Grad == nil {
			continue
		}
		rows, all := p.TouchedRows()
		if all {
			sum += sumSquares(p.Grad.Data)
			continue
		}
		d := p.Grad.Shape[1]
		for _, r := range rows {
			for _, g := range p.Grad.Data[int(r)*d : int(r+1)*d] {
				sum += float64(g) * float64(g)
			}
		}
	}
	norm = math.Sqrt(sum)
	if maxNorm <= 0 || !(norm > maxNorm) || math.IsInf(norm, 0) {
		return norm
	}
	scale := float32(maxNorm / (norm + 1e-6))
	for _, p := range params {
		if p.Frozen || p.Grad == nil {
			continue
		}
		rows, all := p.TouchedRows()
		if all {
			g := p.Grad.Data
			tensor.ParallelFor(len(g), 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					g[i] *= scale
				}
			})
			continue
		}
		d := p.Grad.Shape[1]
		for _, r := range rows {
			row := p.Grad.Data[int(r)*d : int(r+1)*d]
			for i := range row {
				row[i] *= scale
			}
		}
	}
	return norm
}

// sumSquares sums x² in float64 over parallel chunks, adding the partial
// sums in chunk order so the result does not depend on scheduling.
func sumSquares(x []float32) float64 {
	type part struct {
		lo  int
		sum float64
	}
	var (
		mu    sync.Mutex
		parts []part
	)
	tensor.ParallelFor(len(x), 2, func(lo, hi int) {
		var s float64
		for _, v := range x[lo:hi] {
			s += float64(v) * float64(v)
		}
		mu.Lock()
		parts = append(parts, part{lo, s})
		mu.Unlock()
	})
	sort.Slice(parts, func(i, j int) bool { return parts[i].lo < parts[j].lo })
	var s float64
	for _, p := range parts {
		s += p.sum
	}
	return s
}

// MatchState checks that every entry of state (from some optimizer's
// State) belongs to one of params and has its shape, so a checkpoint of a
// different model is refused before training resumes with it. Params
// without state are fine: they had no gradient yet when it was saved.
func MatchState(state map[string]*tensor.Tensor, params []*ag.Param) error {
	shapes := make(map[string][]int, len(params))
	for _, p := range params {
		shapes[p.Name] = p.Value.Shape
	}
	for _, key := range sortedKeys(state) {
		name, field, ok := splitKey(key)
		if !ok {
			return fmt.Errorf("optim: state key %q is not <param>.<field>", key)
		}
		shape, ok := shapes[name]
		if !ok {
			return fmt.Errorf("optim: state %q is for unknown param %q", key, name)
		}
		if perParamField[field] && state[key] != nil && !sameShape(state[key].Shape, shape) {
			return fmt.Errorf("optim: state %q has shape %v, param %q has %v", key, state[key].Shape, name, shape)
		}
	}
	return nil
}

// perParamField lists the state fields shaped like their param.
var perParamField = map[string]bool{fieldExpAvg: true, fieldExpAvgSq: true, fieldMomentum: true}

const (
	fieldExpAvg   = "exp_avg"
	fieldExpAvgSq = "exp_avg_sq"
	fieldStep     = "step"
	fieldMomentum = "momentum_buffer"
)

// splitKey splits "<name>.<field>" at the last dot (names may hold dots).
func splitKey(key string) (name, field string, ok bool) {
	i := strings.LastIndexByte(key, '.')
	if i <= 0 || i == len(key)-1 {
		return "", "", false
	}
	return key[:i], key[i+1:], true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sameShape is tensor.SameShape treating nil and [] alike (both scalars).
func sameShape(a, b []int) bool {
	return (len(a) == 0 && len(b) == 0) || tensor.SameShape(a, b)
}

// checkParams panics on a param list the state map cannot key: an empty or
// repeated name would silently share or lose moments. seen is scratch.
func checkParams(params []*ag.Param, seen map[string]struct{}) {
	clear(seen)
	for _, p := range params {
		if p.Frozen || p.Grad == nil {
			continue
		}
		if p.Name == "" {
			panic("optim: a param has no name; optimizer state is keyed by name")
		}
		if _, dup := seen[p.Name]; dup {
			panic(fmt.Sprintf("optim: two params are named %q", p.Name))
		}
		seen[p.Name] = struct{}{}
	}
}

// checkTensor validates one incoming state tensor.
func checkTensor(key string, t *tensor.Tensor) error {
	if t == nil {
		return fmt.Errorf("optim: state %q is nil", key)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("optim: state %q has shape %v", key, t.Shape)
		}
	}
	if tensor.Numel(t.Shape) != len(t.Data) {
		return fmt.Errorf("optim: state %q has %d values for shape %v", key, len(t.Data), t.Shape)
	}
	return nil
}

// Restore sets params from weights (every param must be there, with its
// shape) and opt from state (optimizer state saved by State, checked with
// MatchState): a training checkpoint's resume.
func Restore(params []*ag.Param, weights map[string]*tensor.Tensor, opt Optimizer, state map[string]*tensor.Tensor) error {
	for _, p := range params {
		t, ok := weights[p.Name]
		if !ok || !sameShape(t.Shape, p.Value.Shape) {
			return fmt.Errorf("tensor %s missing or of another shape", p.Name)
		}
	}
	if err := MatchState(state, params); err != nil {
		return err
	}
	for _, p := range params {
		copy(p.Value.Data, weights[p.Name].Data)
	}
	return opt.LoadState(state)
}
