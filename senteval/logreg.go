package senteval

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"gonum.org/v1/gonum/floats"
)

// Features are the feature vectors of a set of examples, row-major: row i
// is X[i*Dim : (i+1)*Dim]. The trainer reads rows by index, so the folds
// of a cross-validation share one Features.
type Features struct {
	X   []float64
	Dim int
}

// Len is the number of rows.
func (f Features) Len() int {
	if f.Dim == 0 {
		return 0
	}
	return len(f.X) / f.Dim
}

// Row returns row i (not a copy).
func (f Features) Row(i int) []float64 { return f.X[i*f.Dim : (i+1)*f.Dim] }

// LogReg is a softmax (multinomial logistic) regression without a hidden
// layer: p(c | x) = softmax(W x + b)_c, SentEval's classifier with nhid 0.
type LogReg struct {
	Classes, Dim int
	// Params holds W (Classes×Dim, row-major) then b (Classes).
	Params []float64
}

// newLogReg draws W and b from U(−1/√Dim, 1/√Dim), as PyTorch's
// nn.Linear initialises them.
func newLogReg(classes, dim int, rng *rand.Rand) *LogReg {
	m := &LogReg{Classes: classes, Dim: dim, Params: make([]float64, classes*dim+classes)}
	bound := 1 / math.Sqrt(float64(dim))
	for i := range m.Params {
		m.Params[i] = (2*rng.Float64() - 1) * bound
	}
	return m
}

// logits writes W x + b into out (length Classes).
func (m *LogReg) logits(x, out []float64) {
	b := m.Params[m.Classes*m.Dim:]
	for c := range out {
		out[c] = floats.Dot(m.Params[c*m.Dim:(c+1)*m.Dim], x) + b[c]
	}
}

// Predict returns the class of largest score (the smallest such class on
// a tie).
func (m *LogReg) Predict(x []float64) int {
	z := make([]float64, m.Classes)
	m.logits(x, z)
	return floats.MaxIdx(z)
}

// Accuracy is the share of rows of f whose prediction is their label
// (0 for no rows).
func (m *LogReg) Accuracy(f Features, y []int, rows []int) float64 {
	if len(rows) == 0 {
		return 0
	}
	z := make([]float64, m.Classes)
	right := 0
	for _, i := range rows {
		m.logits(f.Row(i), z)
		if floats.MaxIdx(z) == y[i] {
			right++
		}
	}
	return float64(right) / float64(len(rows))
}

// lossGrad returns the mean cross-entropy of rows plus (l2/2)·‖θ‖² (θ = W
// and b) and writes its gradient into grad (same layout as Params). This
// is what SentEval's classifier minimises under the PyTorch versions
// SimCSE and RobustEmbed ran: nn.CrossEntropyLoss averages over the batch
// (SentEval sets loss_fn.size_average = False after construction, which
// PyTorch ≥ 0.4.1 ignores), and Adam's weight_decay adds l2·θ to the
// gradient of every parameter, the bias included.
func (m *LogReg) lossGrad(f Features, y []int, rows []int, l2 float64, grad []float64) float64 {
	clear(grad)
	if len(rows) == 0 {
		return 0
	}
	z := make([]float64, m.Classes)
	gb := grad[m.Classes*m.Dim:]
	var loss float64
	for _, i := range rows {
		x := f.Row(i)
		m.logits(x, z)
		mx := z[floats.MaxIdx(z)]
		var sum float64
		for c := range z {
			z[c] = math.Exp(z[c] - mx)
			sum += z[c]
		}
		loss += math.Log(sum) - math.Log(z[y[i]])
		for c := range z {
			g := z[c] / sum
			if c == y[i] {
				g--
			}
			floats.AddScaled(grad[c*m.Dim:(c+1)*m.Dim], g, x)
			gb[c] += g
		}
	}
	inv := 1 / float64(len(rows))
	floats.Scale(inv, grad)
	loss *= inv
	if l2 != 0 {
		floats.AddScaled(grad, l2, m.Params)
		loss += l2 / 2 * floats.Dot(m.Params, m.Params)
	}
	return loss
}

// TrainConfig is the logistic-regression training of SentEval's
// classifier (nhid 0, optim adam, batch 64, tenacity 5, epoch_size 4, the
// configuration of SimCSE's and RobustEmbed's transfer evaluation).
type TrainConfig struct {
	// L2 is the weight decay λ: the gradient of (λ/2)·‖θ‖² over W and b.
	L2 float64
	// Batch is the mini-batch size; the loss is the batch mean.
	Batch int
	// LR is Adam's learning rate (β1 0.9, β2 0.999, ε 1e-8).
	LR float64
	// EpochSize passes over the training rows (each in a fresh random
	// order) are made between two looks at the validation accuracy.
	EpochSize int
	// Tenacity: training stops at the look that finds the validation
	// accuracy not improved for the (Tenacity+1)-th time, counted over the
	// whole run (SentEval's early_stop_count, never reset), or once more
	// than MaxEpochs passes were made. The parameters of the best look are
	// kept.
	Tenacity, MaxEpochs int
	// Seed seeds the initial weights and the batch order.
	Seed int64
}

// DefaultTrainConfig returns SentEval's settings (λ 0).
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Batch: 64, LR: 1e-3, EpochSize: 4, Tenacity: 5, MaxEpochs: 200, Seed: 1111}
}

// Check validates the settings.
func (c TrainConfig) Check() error {
	switch {
	case !(c.L2 >= 0) || math.IsInf(c.L2, 0):
		return fmt.Errorf("senteval: L2 %g must be a finite number ≥ 0", c.L2)
	case c.Batch < 1:
		return fmt.Errorf("senteval: batch %d must be at least 1", c.Batch)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("senteval: learning rate %g must be a finite number > 0", c.LR)
	case c.EpochSize < 1 || c.Tenacity < 0 || c.MaxEpochs < 0:
		return fmt.Errorf("senteval: epoch size %d, tenacity %d, max epochs %d: want ≥ 1, ≥ 0, ≥ 0", c.EpochSize, c.Tenacity, c.MaxEpochs)
	}
	return nil
}

// Fit trains a logistic regression with classes classes on the rows train
// of f (labels y, indexed like the rows), early-stopping on the rows valid
// as TrainConfig says, with Adam. It returns the model of the best
// validation accuracy and that accuracy (a fraction). The result depends
// only on its arguments: same inputs, same bits.
func Fit(f Features, y []int, classes int, train, valid []int, c TrainConfig) (*LogReg, float64, error) {
	if err := c.Check(); err != nil {
		return nil, 0, err
	}
	switch {
	case f.Dim < 1 || len(f.X)%f.Dim != 0:
		return nil, 0, fmt.Errorf("senteval: %d feature values do not make rows of %d", len(f.X), f.Dim)
	case len(y) != f.Len():
		return nil, 0, fmt.Errorf("senteval: %d labels for %d rows", len(y), f.Len())
	case classes < 2:
		return nil, 0, fmt.Errorf("senteval: %d classes: need at least 2", classes)
	case len(train) == 0 || len(valid) == 0:
		return nil, 0, errors.New("senteval: empty training or validation rows")
	}
	for _, rows := range [][]int{train, valid} {
		for _, i := range rows {
			if i < 0 || i >= len(y) {
				return nil, 0, fmt.Errorf("senteval: row %d out of range [0, %d)", i, len(y))
			}
			if y[i] < 0 || y[i] >= classes {
				return nil, 0, fmt.Errorf("senteval: label %d of row %d outside [0, %d)", y[i], i, classes)
			}
		}
	}
	rng := rand.New(rand.NewSource(c.Seed))
	m := newLogReg(classes, f.Dim, rng)
	n := len(m.Params)
	grad, mom, vel := make([]float64, n), make([]float64, n), make([]float64, n)
	best := append([]float64(nil), m.Params...)
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	step := 0
	batch := make([]int, 0, c.Batch)
	bestAcc, misses := -1.0, 0
	for epoch := 0; epoch <= c.MaxEpochs; {
		for range c.EpochSize {
			perm := rng.Perm(len(train))
			for start := 0; start < len(perm); start += c.Batch {
				batch = batch[:0]
				for _, p := range perm[start:min(start+c.Batch, len(perm))] {
					batch = append(batch, train[p])
				}
				m.lossGrad(f, y, batch, c.L2, grad)
				step++
				bc1 := 1 - math.Pow(beta1, float64(step))
				bc2 := math.Sqrt(1 - math.Pow(beta2, float64(step)))
				for k, g := range grad {
					mom[k] = beta1*mom[k] + (1-beta1)*g
					vel[k] = beta2*vel[k] + (1-beta2)*g*g
					m.Params[k] -= c.LR / bc1 * mom[k] / (math.Sqrt(vel[k])/bc2 + eps)
				}
			}
		}
		epoch += c.EpochSize
		acc := m.Accuracy(f, y, valid)
		if acc > bestAcc {
			bestAcc = acc
			copy(best, m.Params)
			continue
		}
		if misses >= c.Tenacity {
			break
		}
		misses++
	}
	m.Params = best
	return m, bestAcc, nil
}
