package ag

// FastSigmoid is the logistic function the fused LSTM uses, exported so that
// code re-running parts of an LSTM outside a tape (nn's incremental
// re-evaluation) gets the same values.
func FastSigmoid(x float32) float32 { return sigmoid32(x) }

// FastTanh is the hyperbolic tangent the fused LSTM uses.
func FastTanh(x float32) float32 { return tanh32(x) }

// FastTanhVec sets dst[i] = FastTanh(x[i]), bit for bit, with the vector
// kernels the LSTM cell uses; dst and x must not overlap.
func FastTanhVec(dst, x []float32) { tanhVec(dst, x) }
