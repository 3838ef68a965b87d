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
