//go:build amd64 && !purego

package ag

// expVec4 is expVec for a length that is a multiple of 4, in SSE2 (every
// amd64 CPU has it); see expvec_amd64.s.
//
//go:noescape
func expVec4(x []float32)

// expVecSIMD exponentiates the longest prefix of x that the vector kernel
// handles and returns its length.
func expVecSIMD(x []float32) int {
	n := len(x) &^ 3
	if n > 0 {
		expVec4(x[:n])
	}
	return n
}

// sigmoidFromExp4 and tanhFromExp4 are sigmoidFromExp and tanhFromExp for
// lengths that are a multiple of 4; see gates_amd64.s.
//
//go:noescape
func sigmoidFromExp4(dst, x, e []float32)

//go:noescape
func tanhFromExp4(dst, x, e []float32)

func sigmoidFromExpSIMD(dst, x, e []float32) int {
	n := len(dst) &^ 3
	if n > 0 {
		sigmoidFromExp4(dst[:n], x[:n], e[:n])
	}
	return n
}

func tanhFromExpSIMD(dst, x, e []float32) int {
	n := len(dst) &^ 3
	if n > 0 {
		tanhFromExp4(dst[:n], x[:n], e[:n])
	}
	return n
}
