// Package explain attributes a classifier's prediction to the words of its
// input: Integrated Gradients over word embeddings and LIME over word
// positions, as FLAT's interpretation-consistency metrics use them (spec
// §9.2, §12 F12). Both return one signed score per token position and per
// class.
package explain

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// Defaults of spec §12 F12.
const (
	DefaultSteps       = 50
	DefaultSamples     = 5000
	DefaultKernelWidth = 25.0
	// DefaultRidge is the L2 weight of LIME's ridge regression
	// (scikit-learn's Ridge default, which LIME uses).
	DefaultRidge = 1.0
)

// noFast switches the CNN fast paths off (tests compare both).
var noFast bool

// ErrEmpty is returned for an input without tokens.
var ErrEmpty = errors.New("explain: empty input")

// checkClasses validates class indices; nil means every class.
func checkClasses(m *nn.Classifier, classes []int) ([]int, error) {
	c := m.Cfg.NumClasses
	if classes == nil {
		classes = make([]int, c)
		for i := range classes {
			classes[i] = i
		}
	}
	for _, k := range classes {
		if k < 0 || k >= c {
			return nil, fmt.Errorf("explain: class %d: the model has %d classes", k, c)
		}
	}
	return classes, nil
}

// IG computes Integrated Gradients (Sundararajan et al. 2017) of the softmax
// probability of each class in classes (nil = all) w.r.t. the word
// embeddings e of ids, with the zero baseline and a right Riemann sum over
// steps points (α = s/steps, s = 1..steps; 0 means 50):
//
//	IG_j = Σ_d e_jd · (1/steps) Σ_s ∂F_c(α_s·e)/∂e_jd
//
// For the Kim CNN an exact closed form over the projected rows is used (see
// fast.go: the same scores up to float rounding, about 100× faster, and it
// only reads the model). Other encoders run all steps as one batch on one
// tape (one forward/backward per class; for two classes one in all) that
// computes only the input gradient, so it too only reads the model and is
// safe for concurrent use.
// With a word mask the model input is φ_{x_j}·(α·e_j), φ taken from the
// word's own embedding row (φ is a global per-word constant, spec §2.1); a
// group mask multiplies in the word's group scale the same way. A
// transformer's word mask scales its input states instead (spec §2.4): the
// path points α·e_j go through the embedding layer and its output at j is
// multiplied by φ_{x_j}. The result
// has one row per requested class, one score per token.
func IG(m *nn.Classifier, ids []int32, classes []int, steps int) ([][]float64, error) {
	n := len(ids)
	if n == 0 {
		return nil, ErrEmpty
	}
	classes, err := checkClasses(m, classes)
	if err != nil {
		return nil, err
	}
	if steps <= 0 {
		steps = DefaultSteps
	}
	if c := cnnOf(m); c != nil && !noFast {
		return cnnIG(m, c, ids, classes, steps), nil
	}
	d := m.Emb.Dim()
	l := max(n, m.Enc.MinLen())
	mapped := m.MapIDs(ids)
	table := m.Emb.W.Value.Data
	// phi: the inference-mode input scale of each position (word mask φ
	// times the group scale); nil without masks.
	phi := m.InputScale(mapped)
	// state: a transformer's word mask, φ on its input states; nil
	// otherwise.
	state := m.StateScale(mapped)
	// e: the (masked) embedding of each position.
	e := make([]float32, n*d)
	for j, id := range mapped {
		copy(e[j*d:(j+1)*d], table[int(id)*d:int(id+1)*d])
	}
	lengths := make([]int, steps)
	for s := range lengths {
		lengths[s] = n
	}
	out := make([][]float64, len(classes))
	// Two classes: p_1 = 1 − p_0, so IG_1 = −IG_0 exactly and one
	// forward/backward serves both (it halves the LSTM's cost).
	negateFirst := m.Cfg.NumClasses == 2 && len(classes) == 2 && classes[0] != classes[1]
	for ci, c := range classes {
		if ci == 1 && negateFirst {
			out[1] = make([]float64, n)
			for j, v := range out[0] {
				out[1][j] = -v
			}
			break
		}
		x := tensor.New(steps, l, d)
		for s := 0; s < steps; s++ {
			a := float32(s+1) / float32(steps)
			row := x.Data[s*l*d:]
			for k, v := range e {
				row[k] = a * v
			}
		}
		t := ag.NewTape()
		// Only the input gradient is wanted: no weight-gradient GEMMs, and
		// the shared parameters are only read.
		t.InputGradOnly = true
		leaf := t.Leaf(x)
		in := leaf
		if phi != nil {
			p := tensor.New(1, l, 1)
			copy(p.Data, phi)
			in = t.Mul(leaf, t.Const(p))
		}
		var sc *ag.Var
		if state != nil {
			st := tensor.New(steps*l, 1)
			for s := 0; s < steps; s++ {
				copy(st.Data[s*l:], state)
			}
			sc = t.Const(st)
		}
		_, sent := m.EncodeStates(t, in, lengths, sc)
		probs := t.Softmax(m.Head(t, sent))
		sel := tensor.New(steps, m.Cfg.NumClasses)
		for s := 0; s < steps; s++ {
			sel.Data[s*m.Cfg.NumClasses+c] = 1
		}
		t.Backward(t.Sum(t.Mul(probs, t.Const(sel))))
		scores := make([]float64, n)
		if leaf.Grad != nil {
			g := leaf.Grad.Data
			for j := 0; j < n; j++ {
				var acc float64
				for k := 0; k < d; k++ {
					var gs float64
					for s := 0; s < steps; s++ {
						gs += float64(g[(s*l+j)*d+k])
					}
					acc += float64(e[j*d+k]) * gs
				}
				scores[j] = acc / float64(steps)
			}
		}
		out[ci] = scores
	}
	return out, nil
}

// LIMEOptions configure LIME; zero values take the defaults.
type LIMEOptions struct {
	Samples     int     // 5000 perturbed texts (the first is the input itself)
	KernelWidth float64 // 25
	Ridge       float64 // 1
	Seed        int64
}

// MaxLIMETokens bounds LIME's input (its ridge regression holds a
// tokens × tokens matrix: 100,000 tokens ran out of memory), and
// maxLIMECells the perturbed samples × tokens it draws.
const (
	MaxLIMETokens = 10000
	maxLIMECells  = 2e8
)

// LIME (Ribeiro et al. 2016) explains the model's class probabilities with
// a weighted ridge regression on word-presence features. Perturbations
// remove random subsets of positions (the count uniform in 1..n−1, then the
// positions uniformly, as LimeTextExplainer samples); each sample is
// weighted by the exponential kernel sqrt(exp(−d²/w²)) of its cosine
// distance d (×100) to the full text. The coefficients (intercept fitted,
// not penalised) for each requested class (nil = all) are the scores. The
// samples run through the model's batched Predict; a seed gives the same
// scores every time.
func LIME(m *nn.Classifier, ids []int32, classes []int, opt LIMEOptions) ([][]float64, error) {
	n := len(ids)
	if n == 0 {
		return nil, ErrEmpty
	}
	classes, err := checkClasses(m, classes)
	if err != nil {
		return nil, err
	}
	if opt.Samples <= 0 {
		opt.Samples = DefaultSamples
	}
	if n > MaxLIMETokens || float64(n)*float64(opt.Samples) > maxLIMECells {
		return nil, fmt.Errorf("explain: LIME over %d tokens with %d samples is too large (at most %d tokens and %.0f token-samples: its regression is tokens × tokens)",
			n, opt.Samples, MaxLIMETokens, float64(maxLIMECells))
	}
	if opt.KernelWidth <= 0 {
		opt.KernelWidth = DefaultKernelWidth
	}
	if opt.Ridge < 0 {
		return nil, fmt.Errorf("explain: ridge %g must not be negative", opt.Ridge)
	}
	if opt.Ridge == 0 {
		opt.Ridge = DefaultRidge
	}
	if n == 1 {
		// One feature: its effect is the probability change on removal.
		p := m.Predict([][]int32{ids, nil})
		out := make([][]float64, len(classes))
		for i, c := range classes {
			out[i] = []float64{float64(p[0][c] - p[1][c])}
		}
		return out, nil
	}
	rng := rand.New(rand.NewSource(opt.Seed))
	ns := opt.Samples
	z := make([][]bool, ns) // z[s][j]: position j kept
	seqs := make([][]int32, ns)
	weights := make([]float64, ns)
	perm := make([]int, n)
	for s := 0; s < ns; s++ {
		keep := make([]bool, n)
		for j := range keep {
			keep[j] = true
		}
		if s > 0 {
			remove := 1 + rng.Intn(n-1)
			for j := range perm {
				perm[j] = j
			}
			rng.Shuffle(n, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
			for _, j := range perm[:remove] {
				keep[j] = false
			}
		}
		seq := make([]int32, 0, n)
		kept := 0
		for j, k := range keep {
			if k {
				seq = append(seq, ids[j])
				kept++
			}
		}
		z[s], seqs[s] = keep, seq
		// Cosine distance between the binary vector and all-ones.
		dist := (1 - float64(kept)/math.Sqrt(float64(kept)*float64(n))) * 100
		weights[s] = math.Sqrt(math.Exp(-dist * dist / (opt.KernelWidth * opt.KernelWidth)))
	}
	var probs [][]float32
	if c := cnnOf(m); c != nil && !noFast {
		probs = cnnLIMEProbs(m, c, ids, z)
	} else {
		probs = m.Predict(seqs)
	}
	ys := make([][]float64, len(classes))
	for i, c := range classes {
		ys[i] = make([]float64, ns)
		for s := range probs {
			ys[i][s] = float64(probs[s][c])
		}
	}
	return weightedRidge(z, ys, weights, opt.Ridge)
}

// weightedRidge fits y ≈ b0 + Σ_j β_j z_j minimising Σ_s w_s (y_s − ŷ_s)² +
// λ‖β‖² for each response in ys (one shared system), via the normal
// equations on weighted-centred data, solved by Cholesky.
func weightedRidge(z [][]bool, ys [][]float64, w []float64, lambda float64) ([][]float64, error) {
	n := len(z[0])
	var sw float64
	mx := make([]float64, n)
	for s, row := range z {
		sw += w[s]
		for j, k := range row {
			if k {
				mx[j] += w[s]
			}
		}
	}
	if sw <= 0 {
		return nil, errors.New("explain: all LIME sample weights are zero")
	}
	for j := range mx {
		mx[j] /= sw
	}
	a := make([]float64, n*n)
	xc := make([]float64, n)
	for s, row := range z {
		for j, k := range row {
			xc[j] = -mx[j]
			if k {
				xc[j]++
			}
		}
		ws := w[s]
		for i := 0; i < n; i++ {
			wi := ws * xc[i]
			for j := 0; j <= i; j++ {
				a[i*n+j] += wi * xc[j]
			}
		}
	}
	for i := 0; i < n; i++ {
		a[i*n+i] += lambda
		for j := 0; j < i; j++ {
			a[j*n+i] = a[i*n+j]
		}
	}
	chol, err := cholesky(a, n)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(ys))
	for r, y := range ys {
		var my float64
		for s := range y {
			my += w[s] * y[s]
		}
		my /= sw
		rhs := make([]float64, n)
		for s, row := range z {
			dy := w[s] * (y[s] - my)
			for j, k := range row {
				x := -mx[j]
				if k {
					x++
				}
				rhs[j] += x * dy
			}
		}
		out[r] = cholSolve(chol, n, rhs)
	}
	return out, nil
}

// cholesky returns the lower factor L of a symmetric positive-definite a.
func cholesky(a []float64, n int) ([]float64, error) {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= l[i*n+k] * l[j*n+k]
			}
			if i == j {
				if s <= 0 {
					return nil, errors.New("explain: ridge system is not positive definite")
				}
				l[i*n+i] = math.Sqrt(s)
			} else {
				l[i*n+j] = s / l[j*n+j]
			}
		}
	}
	return l, nil
}

// cholSolve solves L·Lᵀ·x = b.
func cholSolve(l []float64, n int, b []float64) []float64 {
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := b[i]
		for k := 0; k < i; k++ {
			s -= l[i*n+k] * y[k]
		}
		y[i] = s / l[i*n+i]
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * x[k]
		}
		x[i] = s / l[i*n+i]
	}
	return x
}

// Probs returns the model's class probabilities for ids (inference mode).
func Probs(m *nn.Classifier, ids []int32) []float32 { return m.Predict([][]int32{ids})[0] }
