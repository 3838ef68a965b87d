//go:build amd64 && !purego

package ag

// normalCDF8 is normalCDF for lengths that are a multiple of 8, in AVX2;
// see gelu_amd64.s.
//
//go:noescape
func normalCDF8(cdf, x, e []float32)

// normalCDFSIMD fills the longest prefix of cdf that the vector kernel
// handles and returns its length.
func normalCDFSIMD(cdf, x, e []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(x) &^ 7
	if n > 0 {
		normalCDF8(cdf[:n], x[:n], e[:n])
	}
	return n
}
