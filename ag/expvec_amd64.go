//go:build amd64 && !purego

package ag

// expVec4 is expVec for a length that is a multiple of 4, in SSE2 (every
// amd64 CPU has it); see expvec_amd64.s.
//
//go:noescape
func expVec4(x []float32)

// expVec8 is expVec4 with AVX2, eight lanes at a time.
//
//go:noescape
func expVec8(x []float32)

func hasAVX2() bool

var useAVX2 = hasAVX2()

// expVecSIMD exponentiates the longest prefix of x that the vector kernels
// handle and returns its length.
func expVecSIMD(x []float32) int {
	n := 0
	if useAVX2 {
		n = len(x) &^ 7
		if n > 0 {
			expVec8(x[:n])
		}
	}
	m := n + (len(x)-n)&^3
	if m > n {
		expVec4(x[n:m])
	}
	return m
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

// setAVX2 turns the AVX2 kernel on (where the CPU has it) or off and
// returns the previous setting, so tests cover both kernels.
func setAVX2(on bool) bool {
	old := useAVX2
	useAVX2 = on && hasAVX2()
	return old
}
