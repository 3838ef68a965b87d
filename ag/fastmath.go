package ag

import (
	"fmt"
	"math"
)

// expf is a float32 exponential accurate to a few ulp, several times faster
// than going through float64 math.Exp: LSTM gates call it billions of times.
// x = n·ln2 + r with |r| ≤ ln2/2, e^r by a degree-6 polynomial, 2^n by
// building the float's exponent bits.
func expf(x float32) float32 {
	switch {
	case x > 88.3762626647949:
		return float32(math.Inf(1))
	case x < -87.3365478515625:
		return 0
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	n := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - n*ln2hi - n*ln2lo
	// Cephes expf polynomial.
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}

func sigmoid32(x float32) float32 {
	ax := x
	if ax > 0 {
		ax = -ax
	}
	return sigmoidFromExp(x, expf(ax))
}

// tanh32 uses tanh(x) = 1 − 2/(e^{2x}+1), and the odd Taylor series near 0
// where that form would cancel (tanhFromExp).
func tanh32(x float32) float32 {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	if ax < 0.0625 || ax > 9 {
		return tanhFromExp(x, 0) // the exponential is not used there
	}
	return tanhFromExp(x, expf(2*ax))
}

// tanhVec sets dst[i] = tanh32(x[i]), bit for bit: the exponentials in one
// vector pass, then the vector tanh kernel. dst and x must not overlap.
func tanhVec(dst, x []float32) {
	e := dst[:len(x)]
	for i, v := range x {
		e[i] = 2 * math.Float32frombits(math.Float32bits(v)&^signBit)
	}
	expVec(e)
	tanhFromExpVec(e, x, e)
}

// sigmoidInPlace sets x[i] = sigmoid32(x[i]), bit for bit, in vector
// passes; e is scratch of at least len(x).
func sigmoidInPlace(x, e []float32) {
	e = e[:len(x)]
	for i, v := range x {
		e[i] = math.Float32frombits(math.Float32bits(v) | signBit)
	}
	expVec(e)
	sigmoidFromExpVec(x, x, e)
}

// tanhInPlace sets x[i] = tanh32(x[i]) likewise.
func tanhInPlace(x, e []float32) {
	e = e[:len(x)]
	for i, v := range x {
		e[i] = 2 * math.Float32frombits(math.Float32bits(v)&^signBit)
	}
	expVec(e)
	tanhFromExpVec(x, x, e)
}

// expVec replaces each x[i] by expf(x[i]), bit for bit. The LSTM cell
// computes all of a row's exponentials in one pass, apart from the gate
// arithmetic, so a vector kernel (amd64) can take most of them.
func expVec(x []float32) {
	for i := expVecSIMD(x); i < len(x); i++ {
		x[i] = expf(x[i])
	}
}

// sigmoidFromExp is sigmoid32(x) given e = expf(−|x|).
func sigmoidFromExp(x, e float32) float32 {
	if x >= 0 {
		return 1 / (1 + e)
	}
	return e / (1 + e)
}

// tanhFromExp is tanh32(x) given e = expf(2|x|).
func tanhFromExp(x, e float32) float32 {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	if ax < 0.0625 {
		x2 := x * x
		return x * (1 + x2*(-1.0/3+x2*(2.0/15+x2*(-17.0/315))))
	}
	if ax > 9 {
		if x > 0 {
			return 1
		}
		return -1
	}
	t := 1 - 2/(e+1)
	if x < 0 {
		return -t
	}
	return t
}

// LSTMStep applies one LSTM cell to a row: z holds the 4H pre-activations
// (blocks i, f, g, o) and becomes the gates σ(i), σ(f), tanh(g), σ(o); the
// state advances as c ← f·c + i·g, h ← o·tanh(c). tmp is scratch of at
// least 4H values; on return tmp[:H] holds tanh(c). The results equal
// sigmoid32/tanh32 element by element.
// Both the taped LSTM and the incremental scorer use it, so they agree.
func LSTMStep(z, c, h, tmp []float32) { LSTMStepAdd(z, nil, nil, c, h, tmp) }

// LSTMStepAdd is LSTMStep on the pre-activations (z + add) + bias, the
// order the LSTM adds its input projection, recurrent term and bias (z
// holds the sum on return, then the gates). add and bias are both nil or
// both 4H long. On amd64 one fused pass per 16 (AVX-512) or 8 (AVX2) units
// does the additions, the gates and the state update (BenchmarkLSTMStep).
func LSTMStepAdd(z, add, bias, c, h, tmp []float32) {
	n := len(h)
	if (add == nil) != (bias == nil) || add != nil && (len(add) < 4*n || len(bias) < 4*n) {
		panic(fmt.Sprintf("ag.LSTMStepAdd: add %d and bias %d values for %d units", len(add), len(bias), n))
	}
	if add != nil {
		add, bias = add[:4*n], bias[:4*n]
	}
	if lstmCellSIMD(z[:4*n], add, bias, c[:n], h, tmp[:n]) == n {
		return
	}
	if add != nil {
		for j := range z[:4*n] {
			z[j] = z[j] + add[j] + bias[j]
		}
	}
	lstmStepPasses(z, c, h, tmp)
}

// lstmStepPasses is LSTMStep in vector passes over the whole row: the
// exponentials of all gates, then each gate kind, then the state.
func lstmStepPasses(z, c, h, tmp []float32) {
	n := len(h)
	e := tmp[:4*n]
	// Blocks i, f and o are sigmoids (expf(−|x|)), block g a tanh
	// (expf(2|x|)); one loop per kind keeps the block test out of the loops.
	// −|x| and |x| by the sign bit: the same values as −max(x, −x) and
	// max(x, −x), without the branches Go's float max needs for ±0 and NaN.
	sig := func(z, e []float32) {
		for j, v := range z {
			e[j] = math.Float32frombits(math.Float32bits(v) | signBit)
		}
	}
	sig(z[:2*n], e[:2*n])
	sig(z[3*n:4*n], e[3*n:4*n])
	for j, v := range z[2*n : 3*n] {
		e[2*n+j] = 2 * math.Float32frombits(math.Float32bits(v)&^signBit)
	}
	expVec(e)
	sigmoidFromExpVec(z[:2*n], z[:2*n], e[:2*n])
	tanhFromExpVec(z[2*n:3*n], z[2*n:3*n], e[2*n:3*n])
	sigmoidFromExpVec(z[3*n:4*n], z[3*n:4*n], e[3*n:4*n])
	ec := tmp[:n]
	for k := range n {
		cv := z[n+k]*c[k] + z[k]*z[2*n+k]
		c[k] = cv
		if cv < 0 {
			cv = -cv
		}
		ec[k] = 2 * cv
	}
	expVec(ec)
	tanhFromExpVec(ec, c, ec) // tanh(c), left in tmp[:n] for a backward pass
	for k := range n {
		h[k] = z[3*n+k] * ec[k]
	}
}

const signBit = 1 << 31

// sigmoidFromExpVec sets dst[i] = sigmoidFromExp(x[i], e[i]) (dst may be x
// or e), bit for bit, a vector kernel taking most of them on amd64.
func sigmoidFromExpVec(dst, x, e []float32) {
	for i := sigmoidFromExpSIMD(dst, x, e); i < len(dst); i++ {
		dst[i] = sigmoidFromExp(x[i], e[i])
	}
}

// tanhFromExpVec sets dst[i] = tanhFromExp(x[i], e[i]) likewise.
func tanhFromExpVec(dst, x, e []float32) {
	for i := tanhFromExpSIMD(dst, x, e); i < len(dst); i++ {
		dst[i] = tanhFromExp(x[i], e[i])
	}
}

// subnormal reports whether v is a subnormal float32 or zero (its exponent
// bits are all zero).
func subnormal(v float32) bool { return math.Float32bits(v)&0x7f800000 == 0 }

// flushSubnormals sets x's subnormal values to zero, as the flush-to-zero
// modes of CPUs and other frameworks do: values below 2⁻¹²⁶ carry nothing a
// gradient step can use, and arithmetic on them is many times slower (an
// axpy 28 times, BenchmarkAxpySubnormal in tensor).
func flushSubnormals(x []float32) {
	for i, v := range x {
		if subnormal(v) {
			x[i] = 0
		}
	}
}
