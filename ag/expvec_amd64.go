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

// lstmCell8 is LSTMStepAdd's AVX2 kernel for units [0, 8·blocks) of n
// (gate blocks n apart from each slice's start); see lstmcell_amd64.s. add
// and bias are both empty or both long enough.
//
//go:noescape
func lstmCell8(z, add, bias, c, h, tc []float32, n, blocks int)

// lstmCell16 is lstmCell8 sixteen units at a time with AVX-512.
//
//go:noescape
func lstmCell16(z, add, bias, c, h, tc []float32, n, blocks int)

func hasAVX512() bool

var useAVX512 = hasAVX512()

// lstmCellSIMD runs the vector kernels on all units and returns their
// count, or 0 without AVX2.
func lstmCellSIMD(z, add, bias, c, h, tc []float32) int {
	if !useAVX2 {
		return 0
	}
	n, done := len(c), 0
	at := func(v []float32) []float32 {
		if len(v) == 0 {
			return nil
		}
		return v[done:]
	}
	if useAVX512 && n >= 16 {
		lstmCell16(z, add, bias, c, h, tc, n, n/16)
		done = n &^ 15
	}
	if blocks := (n - done) / 8; blocks > 0 {
		lstmCell8(at(z), at(add), at(bias), at(c), at(h), at(tc), n, blocks)
		done += 8 * blocks
	}
	if done < n {
		lstmCellTail(z, add, bias, c, h, tc, done)
	}
	return n
}

// lstmCellTail runs units [done, n), fewer than eight, through lstmCell8
// in a zero-padded block of eight: lanes are independent, so each unit
// gets the values any lane would give it.
func lstmCellTail(z, add, bias, c, h, tc []float32, done int) {
	n := len(c)
	var zs, as, bs [32]float32
	var cs, hs, ts [8]float32
	r := n - done
	for g := range 4 {
		copy(zs[8*g:8*g+r], z[g*n+done:g*n+n])
		if len(add) > 0 {
			copy(as[8*g:8*g+r], add[g*n+done:g*n+n])
			copy(bs[8*g:8*g+r], bias[g*n+done:g*n+n])
		}
	}
	copy(cs[:r], c[done:])
	a, b := as[:], bs[:]
	if len(add) == 0 {
		a, b = nil, nil
	}
	lstmCell8(zs[:], a, b, cs[:], hs[:], ts[:], 8, 1)
	for g := range 4 {
		copy(z[g*n+done:g*n+n], zs[8*g:8*g+r])
	}
	copy(c[done:], cs[:r])
	copy(h[done:], hs[:r])
	copy(tc[done:], ts[:r])
}

// lstmBack8 and lstmBack16 are the LSTM cell's backward pass (the loop in
// Tape.lstm's backward function) for units [0, 8·blocks) or [0, 16·blocks)
// of n with AVX2 or AVX-512; see lstmcell_amd64.s.
//
//go:noescape
func lstmBack8(gates, dg, dh, dc, gout, tc, cprev []float32, n, blocks int)

//go:noescape
func lstmBack16(gates, dg, dh, dc, gout, tc, cprev []float32, n, blocks int)

// lstmBackSIMD runs the backward kernel on the longest prefix of units it
// handles and returns its length.
func lstmBackSIMD(gates, dg, dh, dc, gout, tc, cprev []float32) int {
	n, done := len(dh), 0
	if !useAVX2 {
		return 0
	}
	if useAVX512 && n >= 16 {
		lstmBack16(gates, dg, dh, dc, gout, tc, cprev, n, n/16)
		done = n &^ 15
	}
	if blocks := (n - done) / 8; blocks > 0 {
		lstmBack8(gates[done:], dg[done:], dh[done:], dc[done:], gout[done:], tc[done:], cprev[done:], n, blocks)
		done += 8 * blocks
	}
	return done
}

// setAVX2 turns the AVX2 kernel on (where the CPU has it) or off and
// returns the previous setting, so tests cover both kernels.
func setAVX2(on bool) bool {
	old := useAVX2
	useAVX2 = on && hasAVX2()
	return old
}

// setAVX512 likewise for the AVX-512 LSTM cell.
func setAVX512(on bool) bool {
	old := useAVX512
	useAVX512 = on && hasAVX512()
	return old
}
