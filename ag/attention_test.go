package ag

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// naiveAttention computes SelfAttention's forward pass in float64 with
// plain loops, from the definition.
func naiveAttention(q, k, v *tensor.Tensor, heads int, lengths []int) []float64 {
	nb, l, h := q.Shape[0], q.Shape[1], q.Shape[2]
	dh := h / heads
	out := make([]float64, nb*l*h)
	at := func(x *tensor.Tensor, b, i, c int) float64 { return float64(x.Data[(b*l+i)*h+c]) }
	for b := 0; b < nb; b++ {
		n := lengths[b]
		for hd := 0; hd < heads; hd++ {
			for i := 0; i < n; i++ {
				s := make([]float64, n)
				m := math.Inf(-1)
				for j := 0; j < n; j++ {
					for c := hd * dh; c < (hd+1)*dh; c++ {
						s[j] += at(q, b, i, c) * at(k, b, j, c)
					}
					s[j] /= math.Sqrt(float64(dh))
					m = math.Max(m, s[j])
				}
				var z float64
				for j := range s {
					s[j] = math.Exp(s[j] - m)
					z += s[j]
				}
				for c := hd * dh; c < (hd+1)*dh; c++ {
					var acc float64
					for j := 0; j < n; j++ {
						acc += s[j] / z * at(v, b, j, c)
					}
					out[(b*l+i)*h+c] = acc
				}
			}
		}
	}
	return out
}

func TestSelfAttentionMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	q, k, v := randT(r, 3, 7, 12), randT(r, 3, 7, 12), randT(r, 3, 7, 12)
	lengths := []int{7, 4, 1}
	got := NewTape().SelfAttention(NewTape().Const(q), NewTape().Const(k), NewTape().Const(v), 4, lengths, 0).Data()
	want := naiveAttention(q, k, v, 4, lengths)
	for i, w := range want {
		if math.Abs(float64(got[i])-w) > 1e-5 {
			t.Fatalf("element %d: got %g, want %g", i, got[i], w)
		}
	}
	// Padded positions are zero: row 1 from position 4, row 2 from 1.
	for _, i := range []int{(1*7+4)*12 + 3, (2*7+1)*12 + 0, (2*7+6)*12 + 11} {
		if got[i] != 0 {
			t.Errorf("padded element %d = %g, want 0", i, got[i])
		}
	}
}

// TestSelfAttentionPaddingInvariant: a row gives the same values alone and
// padded inside a longer batch, whatever the worker count.
func TestSelfAttentionPaddingInvariant(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	const l, h, n = 9, 8, 5
	q, k, v := randT(r, 2, l, h), randT(r, 2, l, h), randT(r, 2, l, h)
	batch := NewTape().SelfAttention(NewTape().Const(q), NewTape().Const(k), NewTape().Const(v), 2, []int{l, n}, 0).Data()
	row := func(x *tensor.Tensor) *tensor.Tensor {
		return tensor.From(append([]float32(nil), x.Data[l*h:l*h+n*h]...), 1, n, h)
	}
	defer tensor.SetWorkers(tensor.Workers())
	tensor.SetWorkers(1)
	alone := NewTape().SelfAttention(NewTape().Const(row(q)), NewTape().Const(row(k)), NewTape().Const(row(v)), 2, []int{n}, 0).Data()
	for i, a := range alone {
		if b := batch[l*h+i]; a != b {
			t.Fatalf("element %d: %g alone, %g in the batch", i, a, b)
		}
	}
}

// TestSelfAttentionDropout: the mask is drawn from the tape's stream (the
// same seed gives the same output), inference ignores it, and dropped
// probabilities change the output.
func TestSelfAttentionDropout(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	q, k, v := randT(r, 2, 6, 8), randT(r, 2, 6, 8), randT(r, 2, 6, 8)
	run := func(train bool, seed int64) []float32 {
		tp := NewTape()
		tp.Train, tp.Rng = train, rand.New(rand.NewSource(seed))
		return tp.SelfAttention(tp.Const(q), tp.Const(k), tp.Const(v), 2, []int{6, 3}, 0.5).Data()
	}
	a, b, c, inf := run(true, 1), run(true, 1), run(true, 2), run(false, 1)
	same := func(x, y []float32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same seed gave different outputs")
	}
	if same(a, c) || same(a, inf) {
		t.Error("dropout changed nothing")
	}
	plain := NewTape().SelfAttention(NewTape().Const(q), NewTape().Const(k), NewTape().Const(v), 2, []int{6, 3}, 0).Data()
	if !same(inf, plain) {
		t.Error("dropout acted on an inference tape")
	}
}

// TestGELUMatchesErf: the float32 GELU stays within 1e-6 of the float64
// erf form over the range activations take.
func TestGELUMatchesErf(t *testing.T) {
	var xs []float32
	for x := -12.0; x <= 12; x += 0.001 {
		xs = append(xs, float32(x))
	}
	got := NewTape().GELU(NewTape().Const(tensor.From(xs, len(xs)))).Data()
	for i, x := range xs {
		xf := float64(x)
		want := 0.5 * xf * (1 + math.Erf(xf/math.Sqrt2))
		if d := math.Abs(float64(got[i]) - want); d > 1e-6*math.Max(1, math.Abs(xf)) {
			t.Fatalf("GELU(%g) = %g, want %g", x, got[i], want)
		}
	}
}

// TestNormalCDFVectorMatchesScalar: the AVX2 kernel gives normalCDF's bits
// in every lane, signs, zeros and extremes included.
func TestNormalCDFVectorMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	xs := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 40, -40, 3.4e38, -3.4e38, 0.5, -0.5}
	for len(xs)%8 != 0 || len(xs) < 4096 {
		xs = append(xs, float32(r.NormFloat64()*4))
	}
	es := make([]float32, len(xs))
	for i, v := range xs {
		es[i] = -0.5 * v * v
	}
	expVec(es)
	got := make([]float32, len(xs))
	if n := normalCDFSIMD(got, xs, es); n == 0 {
		t.Skip("no vector kernel on this CPU")
	}
	for i, v := range xs {
		if want := normalCDF(v, es[i]); math.Float32bits(got[i]) != math.Float32bits(want) {
			t.Fatalf("x = %g: vector %g, scalar %g", v, got[i], want)
		}
	}
}

// TestSelfAttentionPackedMatchesSeparate: q, k and v side by side in one
// tensor give what three separate ones give.
func TestSelfAttentionPackedMatchesSeparate(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const nb, l, h = 3, 6, 8
	qkv := randT(r, nb, l, 3*h)
	part := func(i int) *tensor.Tensor {
		x := tensor.New(nb, l, h)
		for row := 0; row < nb*l; row++ {
			copy(x.Data[row*h:(row+1)*h], qkv.Data[row*3*h+i*h:row*3*h+(i+1)*h])
		}
		return x
	}
	lengths := []int{6, 2, 4}
	tp := NewTape()
	want := tp.SelfAttention(tp.Const(part(0)), tp.Const(part(1)), tp.Const(part(2)), 2, lengths, 0).Data()
	got := tp.SelfAttentionPacked(tp.Const(qkv), 2, lengths, 0).Data()
	if d := tensor.MaxAbsDiff(got, want); d > 1e-6 {
		t.Fatalf("packed and separate differ by %g", d)
	}
}

// TestDropoutMaskRate: the mask keeps about 1−p of its values, scaled by
// 1/(1−p), and depends only on the seed.
func TestDropoutMaskRate(t *testing.T) {
	const n, p = 200000, 0.1
	a, b, c := dropoutMask(42, n, p), dropoutMask(42, n, p), dropoutMask(43, n, p)
	kept := 0
	for i, v := range a {
		if v != b[i] {
			t.Fatal("the same seed gave another mask")
		}
		if v != 0 {
			kept++
			if math.Abs(float64(v)-1/(1-p)) > 1e-6 {
				t.Fatalf("kept value %g", v)
			}
		}
	}
	// Binomial: mean 0.9·n, SE √(n·0.09) ≈ 134; allow 5 SE.
	if d := math.Abs(float64(kept) - (1-p)*n); d > 5*134 {
		t.Errorf("kept %d of %d, want about %g", kept, n, (1-p)*n)
	}
	same := 0
	for i := range a {
		if (a[i] == 0) == (c[i] == 0) {
			same++
		}
	}
	if same == n {
		t.Error("another seed gave the same mask")
	}
}

// naiveKeyAttention is naiveAttention with keys removed: query i of row b
// attends only to the real positions j with keep[b·l+j] (all of them when
// the row keeps none).
func naiveKeyAttention(qkv *tensor.Tensor, heads int, lengths []int, keep []bool) []float64 {
	nb, l, h3 := qkv.Shape[0], qkv.Shape[1], qkv.Shape[2]
	h := h3 / 3
	dh := h / heads
	at := func(b, i, c int) float64 { return float64(qkv.Data[(b*l+i)*h3+c]) }
	out := make([]float64, nb*l*h)
	for b := 0; b < nb; b++ {
		n := lengths[b]
		use := make([]bool, n)
		any := false
		for j := range use {
			use[j] = keep[b*l+j]
			any = any || use[j]
		}
		for j := range use {
			use[j] = use[j] || !any
		}
		for hd := 0; hd < heads; hd++ {
			for i := 0; i < n; i++ {
				s := make([]float64, n)
				var z float64
				for j := 0; j < n; j++ {
					if !use[j] {
						continue
					}
					for c := hd * dh; c < (hd+1)*dh; c++ {
						s[j] += at(b, i, c) * at(b, j, h+c)
					}
					s[j] = math.Exp(s[j] / math.Sqrt(float64(dh)))
					z += s[j]
				}
				for c := hd * dh; c < (hd+1)*dh; c++ {
					var acc float64
					for j := 0; j < n; j++ {
						acc += s[j] / z * at(b, j, 2*h+c)
					}
					out[(b*l+i)*h+c] = acc
				}
			}
		}
	}
	return out
}

// keyCase is a batch of 4 rows of length ≤ 6 whose key mask covers every
// case: some keys removed (row 0, including its first, the [CLS]
// position), none (row 1), all real ones removed (row 2: it keeps them
// all), and a removed key beyond the row's length (row 3, padding).
func keyCase() (lengths []int, keep []bool) {
	lengths = []int{6, 4, 3, 2}
	keep = []bool{
		false, true, false, true, true, false,
		true, true, true, true, false, false,
		false, false, false, true, true, true,
		true, true, false, false, false, false,
	}
	return lengths, keep
}

// TestSelfAttentionKeysMatchesDefinition: removed keys get probability 0
// from every query (float64 definition), a row with every real key
// removed keeps them all (and no output is NaN), and an all-true mask
// gives the unmasked op's values bit for bit.
func TestSelfAttentionKeysMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	qkv := randT(r, 4, 6, 3*8)
	lengths, keep := keyCase()
	got := NewTape().SelfAttentionPackedKeys(NewTape().Const(qkv), 2, lengths, keep, 0).Data()
	want := naiveKeyAttention(qkv, 2, lengths, keep)
	for i, w := range want {
		if math.IsNaN(float64(got[i])) || math.Abs(float64(got[i])-w) > 1e-5 {
			t.Fatalf("element %d: got %g, want %g", i, got[i], w)
		}
	}
	plain := NewTape().SelfAttentionPacked(NewTape().Const(qkv), 2, lengths, 0).Data()
	// Row 2 (every key removed) and row 1 (none) equal the unmasked op;
	// row 0 does not.
	const w = 6 * 8
	for i := w; i < 3*w; i++ {
		if got[i] != plain[i] {
			t.Fatalf("element %d of an unmasked or fully masked row: %g, unmasked %g", i, got[i], plain[i])
		}
	}
	differs := false
	for i := 0; i < w; i++ {
		differs = differs || got[i] != plain[i]
	}
	if !differs {
		t.Error("removing keys of row 0 changed nothing")
	}
	all := make([]bool, len(keep))
	for i := range all {
		all[i] = true
	}
	full := NewTape().SelfAttentionPackedKeys(NewTape().Const(qkv), 2, lengths, all, 0).Data()
	for i := range full {
		if full[i] != plain[i] {
			t.Fatalf("all keys kept: element %d %g, unmasked %g", i, full[i], plain[i])
		}
	}
}

// TestSelfAttentionKeysGradient: the key-masked op's backward pass agrees
// with finite differences, with and without attention dropout, and the
// removed keys' key and value columns get no gradient.
func TestSelfAttentionKeysGradient(t *testing.T) {
	lengths, keep := keyCase()
	for _, p := range []float32{0, 0.3} {
		qkv := randT(rand.New(rand.NewSource(22)), 4, 6, 3*6)
		err := GradCheck([]*tensor.Tensor{qkv}, 1e-2, 2e-2, func(t *Tape, v []*Var) *Var {
			t.Train, t.Rng = true, rand.New(rand.NewSource(3)) // the same dropout mask on every evaluation
			return t.SelfAttentionPackedKeys(v[0], 3, lengths, keep, p)
		})
		if err != nil {
			t.Errorf("dropout %g: %v", p, err)
		}
	}
	tp := NewTape()
	x := tp.Leaf(randT(rand.New(rand.NewSource(23)), 4, 6, 3*6))
	tp.Backward(tp.Sum(tp.Square(tp.SelfAttentionPackedKeys(x, 3, lengths, keep, 0))))
	for _, j := range []int{0, 2, 5} { // row 0's removed keys
		for c := 6; c < 18; c++ { // their key and value columns
			if g := x.Grad.Data[j*18+c]; g != 0 {
				t.Fatalf("removed key %d, column %d: gradient %g", j, c, g)
			}
		}
	}
}
