package senteval

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// blobs generates n rows of dim features in classes classes: row i has
// label i mod classes and the features of its class centre (±sep on a
// class's own coordinates) plus standard normal noise; with labelNoise
// the labels are drawn at random instead.
func blobs(n, dim, classes int, sep float64, randomLabels bool, seed int64) (Features, []int) {
	rng := rand.New(rand.NewSource(seed))
	f := Features{X: make([]float64, n*dim), Dim: dim}
	y := make([]int, n)
	for i := range n {
		c := i % classes
		y[i] = c
		if randomLabels {
			y[i] = rng.Intn(classes)
		}
		row := f.Row(i)
		for j := range row {
			row[j] = rng.NormFloat64()
			if j%classes == c {
				row[j] += sep
			}
		}
	}
	return f, y
}

func TestFitSeparable(t *testing.T) {
	for _, classes := range []int{2, 3} {
		f, y := blobs(900, 6, classes, 8, false, 1)
		rows := rowRange(0, 900)
		m, dev, err := Fit(f, y, classes, rows[:600], rows[600:700], DefaultTrainConfig())
		if err != nil {
			t.Fatal(err)
		}
		if acc := m.Accuracy(f, y, rows[700:]); acc < 0.99 || dev < 0.99 {
			t.Errorf("%d well-separated classes: test accuracy %.3f, validation %.3f; want ≥ 0.99", classes, acc, dev)
		}
	}
}

func TestFitRandomLabelsIsChance(t *testing.T) {
	f, y := blobs(3000, 10, 2, 0, true, 2)
	rows := rowRange(0, 3000)
	m, _, err := Fit(f, y, 2, rows[:2000], rows[2000:2300], DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	// 700 test rows: the binomial SE at 0.5 is 0.019; allow 3.5 SE.
	if acc := m.Accuracy(f, y, rows[2300:]); math.Abs(acc-0.5) > 0.066 {
		t.Errorf("random labels: test accuracy %.3f, want chance (0.5)", acc)
	}
}

// TestLossGradMatchesFiniteDifferences: the analytic gradient of the
// mean cross-entropy plus (λ/2)‖θ‖² against central differences.
func TestLossGradMatchesFiniteDifferences(t *testing.T) {
	f, y := blobs(12, 4, 3, 1, true, 3)
	m := newLogReg(3, 4, rand.New(rand.NewSource(4)))
	rows := []int{0, 3, 5, 7, 11, 3} // a row twice counts twice
	for _, l2 := range []float64{0, 0.3} {
		grad := make([]float64, len(m.Params))
		m.lossGrad(f, y, rows, l2, grad)
		scratch := make([]float64, len(m.Params))
		const h = 1e-6
		for k := range m.Params {
			old := m.Params[k]
			m.Params[k] = old + h
			up := m.lossGrad(f, y, rows, l2, scratch)
			m.Params[k] = old - h
			down := m.lossGrad(f, y, rows, l2, scratch)
			m.Params[k] = old
			fd := (up - down) / (2 * h)
			if math.Abs(fd-grad[k]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("λ %g, parameter %d: analytic %.9f, finite difference %.9f", l2, k, grad[k], fd)
			}
		}
	}
}

func TestFitIsDeterministic(t *testing.T) {
	f, y := blobs(500, 5, 2, 1, false, 5)
	rows := rowRange(0, 500)
	c := DefaultTrainConfig()
	c.L2 = 1e-3
	a, accA, err := Fit(f, y, 2, rows[:400], rows[400:], c)
	if err != nil {
		t.Fatal(err)
	}
	b, accB, _ := Fit(f, y, 2, rows[:400], rows[400:], c)
	if accA != accB || !slices.Equal(a.Params, b.Params) {
		t.Error("two fits with the same inputs differ")
	}
	c.Seed++
	d, _, _ := Fit(f, y, 2, rows[:400], rows[400:], c)
	if slices.Equal(a.Params, d.Params) {
		t.Error("another seed gave the same weights")
	}
}

func TestFitRefusesBadInput(t *testing.T) {
	f, y := blobs(20, 3, 2, 1, false, 6)
	rows := rowRange(0, 20)
	c := DefaultTrainConfig()
	bad := func(f Features, y []int, classes int, train, valid []int, c TrainConfig) bool {
		_, _, err := Fit(f, y, classes, train, valid, c)
		return err != nil
	}
	yBad := slices.Clone(y)
	yBad[3] = 2
	cNaN := c
	cNaN.L2 = math.NaN()
	cBatch := c
	cBatch.Batch = 0
	for name, refused := range map[string]bool{
		"label outside the classes": bad(f, yBad, 2, rows[:10], rows[10:], c),
		"row out of range":          bad(f, y, 2, []int{0, 20}, rows[10:], c),
		"no validation rows":        bad(f, y, 2, rows, nil, c),
		"one class":                 bad(f, y, 1, rows[:10], rows[10:], c),
		"ragged features":           bad(Features{X: f.X[:59], Dim: 3}, y, 2, rows[:10], rows[10:], c),
		"NaN weight decay":          bad(f, y, 2, rows[:10], rows[10:], cNaN),
		"batch 0":                   bad(f, y, 2, rows[:10], rows[10:], cBatch),
	} {
		if !refused {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestKFoldPartitionsAndStratifies(t *testing.T) {
	labels := make([]int, 103)
	for i := range labels {
		if i%3 == 0 {
			labels[i] = 1 // 35 of class 1, 68 of class 0
		}
	}
	folds, err := KFold(labels, 10, 7)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, len(labels))
	for _, f := range folds {
		if len(f) < 10 || len(f) > 11 {
			t.Errorf("fold of %d rows, want 10 or 11", len(f))
		}
		ones := 0
		for _, i := range f {
			seen[i]++
			ones += labels[i]
		}
		if ones < 3 || ones > 4 {
			t.Errorf("fold with %d rows of class 1, want 3 or 4 (35 over 10 folds)", ones)
		}
		if !slices.IsSorted(f) {
			t.Error("fold rows not sorted")
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("row %d in %d folds", i, n)
		}
	}
	again, _ := KFold(labels, 10, 7)
	other, _ := KFold(labels, 10, 8)
	if !slices.EqualFunc(folds, again, slices.Equal) {
		t.Error("same seed, other folds")
	}
	if slices.EqualFunc(folds, other, slices.Equal) {
		t.Error("another seed, same folds")
	}
	if _, err := KFold(labels[:5], 10, 1); err == nil {
		t.Error("10 folds of 5 rows accepted")
	}
	if _, err := KFold(labels, 1, 1); err == nil {
		t.Error("1 fold accepted")
	}
}

func TestHoldOutIsATenth(t *testing.T) {
	y := make([]int, 200)
	for i := range y {
		y[i] = i % 2
	}
	rows := rowRange(50, 100) // rows 50..149
	tr, va, err := holdOut(rows, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Sorted(slices.Values(slices.Concat(tr, va)))
	if len(va) != 10 || !slices.Equal(all, rows) {
		t.Errorf("validation %v, training %d rows: want 10 held out of the 100 given", va, len(tr))
	}
}

// BenchmarkFit times one classifier of the transfer protocol on a task of
// MR's size (8,600 training and 960 validation rows of 384 features, the
// width of MiniLM's embeddings).
func BenchmarkFit(b *testing.B) {
	f, y := blobs(9560, 384, 2, 0.1, false, 9)
	rows := rowRange(0, 9560)
	c := DefaultTrainConfig()
	c.L2 = 1e-4
	for b.Loop() {
		if _, _, err := Fit(f, y, 2, rows[:8600], rows[8600:], c); err != nil {
			b.Fatal(err)
		}
	}
}
