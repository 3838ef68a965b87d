// Package sgemm is the simd backend's SGEMM: Go with assembly
// micro-kernels (sgemm_amd64.s), no cgo, in a package of its own because
// Go does not allow assembly in a package that uses cgo (tensor does under
// -tags openblas).
//
// It follows the GotoBLAS/BLIS scheme: C is computed in panels of nc
// columns; for each kc-deep slice of k, op(B)'s kc×nc panel is packed into
// nr-wide strips, then for each mc-row block op(A)'s mc×kc block is packed
// into mr-tall strips, and the micro-kernel multiplies one A strip by one
// B strip into an mr×nr tile of C held in registers. See docs/engine.md
// for why these sizes.
package sgemm

import (
	"fmt"
	"math/bits"
	"sync"
)

const (
	// sgemmKC bounds the depth of one packed slice of k (see sliceDepth):
	// a kc×nr strip of B (40 KiB for the AVX-512 kernel at 320) stays in a
	// 48 KiB L1 while A strips stream past it. 256 to 512 measured within
	// a few per cent of each other on the engine's shapes once slices are
	// balanced; 320 was best or near it on all. Every kernel uses the same
	// depth, so every kernel adds the same products in the same order.
	sgemmKC = 320
	// sgemmMC rows of packed A (300 KiB at kc 320) stay in L2, which is
	// 1 MiB here, while B strips pass (120 to 960 measured alike).
	sgemmMC = 240
	// sgemmNC columns of packed B (5 MiB at kc 320) are meant for L3; most
	// of the engine's products are narrower and take one panel.
	sgemmNC = 4096
	// maxTile bounds a kernel's mr·nr (the edge tiles' buffer).
	maxTile = 12 * 32
	// sgemmParallelWork is the multiply-add count (m·n·k) below which a
	// product runs on the calling goroutine: starting goroutines and
	// packing B twice costs more than it saves.
	sgemmParallelWork = 1 << 20
	// directRows: up to this many A strips (directRows·mr rows) the kernel
	// reads row-major B in place rather than packed.
	directRows = 2
)

// Kernel is a family of micro-kernels for one instruction set: fns[r]
// computes C[0:r][0:NR] = alpha·(a·b) + beta·C for an A strip packed MR
// values per k (r of them used) and a kc×NR block of B, ldb values per k
// (a packed strip: NR); beta == 0 overwrites C without reading it (NaN
// included). Every element is one chain of fused multiply-adds in k order,
// then one multiply by alpha and one fused multiply-add with beta·C, in
// every kernel: results do not depend on the kernel, the tile an element
// falls in, or the thread count.
type Kernel struct {
	Name   string // "avx512", "avx2"
	MR, NR int    // the tile
	fns    []kernelFunc
	// wide computes one row of wideNR columns, B read in place (ldb
	// apart); the same operations per element as fns.
	wide   kernelFunc
	wideNR int
}

type kernelFunc func(kc int, a, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// sliceDepth is the depth of k's slices: k cut into the fewest slices of
// at most sgemmKC, all of about equal depth (k 300 is one slice of 300,
// not 256 and a short 44 whose update of C costs as much as a long one).
// It depends on k alone, so every kernel, tile and thread count cuts the
// sum over k at the same places.
func sliceDepth(k int) int {
	n := (k + sgemmKC - 1) / sgemmKC
	return (k + n - 1) / n
}

// checkGemmArgs panics, like gonum, on sizes or strides that do not fit
// the slices: the kernels write C through pointers, without Go's checks.
func checkGemmArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	switch {
	case m < 0 || n < 0 || k < 0:
		panic(fmt.Sprintf("sgemm: negative GEMM size %d×%d×%d", m, n, k))
	case lda < max(1, ca) || ldb < max(1, cb) || ldc < max(1, n):
		panic(fmt.Sprintf("sgemm: GEMM leading dimensions lda %d, ldb %d, ldc %d too small for %d×%d×%d", lda, ldb, ldc, m, n, k))
	case m > 0 && n > 0 && len(c) < (m-1)*ldc+n:
		panic(fmt.Sprintf("sgemm: GEMM C has %d values, want %d", len(c), (m-1)*ldc+n))
	case m > 0 && n > 0 && k > 0 && (len(a) < (ra-1)*lda+ca || len(b) < (rb-1)*ldb+cb):
		panic(fmt.Sprintf("sgemm: GEMM A or B too short (%d, %d values) for %d×%d×%d", len(a), len(b), m, n, k))
	}
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices with
// kern on up to threads goroutines, with BLAS's semantics (beta == 0
// overwrites C, NaN included; k == 0 scales C by beta). Sizes and strides
// that do not fit the slices panic.
func Gemm(kern *Kernel, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemmArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleC(c, m, n, ldc, beta)
		return
	}
	t := threads
	if m*n*k < sgemmParallelWork {
		t = 1
	}
	// Split C, never k, into one block per goroutine, in whole tiles:
	// each element gets the same operations whatever the thread count.
	// Split the longer side; each goroutine packs the other operand whole.
	unit, size := kern.MR, m
	if n > m {
		unit, size = kern.NR, n
	}
	tiles := (size + unit - 1) / unit
	t = min(t, tiles)
	if t <= 1 {
		sgemmSerial(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	per := (tiles + t - 1) / t * unit
	var wg sync.WaitGroup
	for lo := per; lo < size; lo += per {
		hi := min(lo+per, size)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			if n > m {
				bo := lo
				if transB {
					bo = lo * ldb
				}
				sgemmSerial(kern, transA, transB, m, hi-lo, k, alpha, a, lda, b[bo:], ldb, beta, c[lo:], ldc)
			} else {
				ao := lo * lda
				if transA {
					ao = lo
				}
				sgemmSerial(kern, transA, transB, hi-lo, n, k, alpha, a[ao:], lda, b, ldb, beta, c[lo*ldc:], ldc)
			}
		}(lo, hi)
	}
	if n > m {
		sgemmSerial(kern, transA, transB, m, per, k, alpha, a, lda, b, ldb, beta, c, ldc)
	} else {
		sgemmSerial(kern, transA, transB, per, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	wg.Wait()
}

// scaleC is C = beta·C, with beta == 0 overwriting (NaN included).
func scaleC(c []float32, m, n, ldc int, beta float32) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// sgemmSerial is the blocked product on the calling goroutine.
func sgemmSerial(kern *Kernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mr, nr := kern.MR, kern.NR
	kcMax := sliceDepth(k)
	// With few rows each B strip meets one or two A strips: the kernel
	// reads B where it lies (row-major B only) instead of copying it.
	direct := !transB && m <= directRows*mr
	ncMax := min(sgemmNC, (n+nr-1)/nr*nr)
	if direct {
		ncMax = nr // the last, partial strip
	}
	mcMax := min(sgemmMC, (m+mr-1)/mr*mr)
	bp := getBuf(kcMax * ncMax)
	ap := getBuf(kcMax * mcMax)
	defer putBuf(bp)
	defer putBuf(ap)
	for jc := 0; jc < n; jc += sgemmNC {
		nc := min(sgemmNC, n-jc)
		for pc := 0; pc < k; pc += kcMax {
			kc := min(kcMax, k-pc)
			if !direct {
				packB(bp, transB, b, ldb, pc, jc, kc, nc, nr)
			}
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := 0; ic < m; ic += sgemmMC {
				mc := min(sgemmMC, m-ic)
				packA(ap, transA, a, lda, ic, pc, mc, kc, mr)
				jr := 0
				if direct && mc == 1 && kern.wide != nil {
					for ; jr+kern.wideNR <= nc; jr += kern.wideNR {
						o := pc*ldb + jc + jr
						bs := b[o : o+(kc-1)*ldb+kern.wideNR]
						ci := ic*ldc + jc + jr
						_ = c[ci+kern.wideNR-1]
						kern.wide(kc, &ap[0], &bs[0], ldb, &c[ci], ldc, alpha, bet)
					}
				}
				for ; jr < nc; jr += nr {
					cols := min(nr, nc-jr)
					var bs []float32
					bstride := nr
					switch {
					case !direct:
						bs = bp[jr*kc : jr*kc+nr*kc]
					case cols == nr:
						o := pc*ldb + jc + jr
						bs = b[o : o+(kc-1)*ldb+nr]
						bstride = ldb
					default:
						packB(bp, false, b, ldb, pc, jc+jr, kc, cols, nr)
						bs = bp[:nr*kc]
					}
					for ir := 0; ir < mc; ir += mr {
						rows := min(mr, mc-ir)
						as := ap[ir*kc : ir*kc+mr*kc]
						ci := (ic+ir)*ldc + jc + jr
						if cols == nr {
							_ = c[ci+(rows-1)*ldc+nr-1] // the kernel writes up to here
							kern.fns[rows](kc, &as[0], &bs[0], bstride, &c[ci], ldc, alpha, bet)
						} else {
							edgeTile(kern, kc, as, bs, c[ci:], ldc, rows, cols, alpha, bet)
						}
					}
				}
			}
		}
	}
}

// edgeTile runs the kernel on a tile narrower than NR through a full-width
// buffer: the same operations as a full tile.
func edgeTile(kern *Kernel, kc int, as, bs, c []float32, ldc, rows, cols int, alpha, beta float32) {
	var t [maxTile]float32
	nr := kern.NR
	if beta != 0 {
		for r := range rows {
			copy(t[r*nr:r*nr+cols], c[r*ldc:r*ldc+cols])
		}
	}
	kern.fns[rows](kc, &as[0], &bs[0], nr, &t[0], nr, alpha, beta)
	for r := range rows {
		copy(c[r*ldc:r*ldc+cols], t[r*nr:r*nr+cols])
	}
}

// packA copies op(A)[i0:i0+mc][p0:p0+kc] into dst as mr-row strips, each
// k after k (mr values per k), rows past mc zero.
func packA(dst []float32, transA bool, a []float32, lda, i0, p0, mc, kc, mr int) {
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		d := dst[ir*kc : ir*kc+mr*kc]
		if transA {
			// op(A)[i][p] = a[p·lda+i]: each k's rows lie side by side.
			for p := range kc {
				o := (p0+p)*lda + i0 + ir
				copy(d[p*mr:p*mr+rows], a[o:o+rows])
			}
		} else {
			interleave(d, mr, a, (i0+ir)*lda+p0, lda, rows, kc)
		}
		if rows < mr {
			for p := range kc {
				clear(d[p*mr+rows : p*mr+mr])
			}
		}
	}
}

// packB copies op(B)[p0:p0+kc][j0:j0+nc] into dst as nr-column strips,
// each k after k (nr values per k), columns past nc zero.
func packB(dst []float32, transB bool, b []float32, ldb, p0, j0, kc, nc, nr int) {
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		d := dst[jr*kc : jr*kc+nr*kc]
		if transB {
			// op(B)[p][j] = b[j·ldb+p]: each column is a row of b.
			interleave(d, nr, b, (j0+jr)*ldb+p0, ldb, cols, kc)
		} else {
			for p := range kc {
				o := (p0+p)*ldb + j0 + jr
				copy(d[p*nr:p*nr+cols], b[o:o+cols])
			}
		}
		if cols < nr {
			for p := range kc {
				clear(d[p*nr+cols : p*nr+nr])
			}
		}
	}
}

// Pack buffers are reused: a product of the engine's sizes packs up to a
// few MiB, and Go's make would zero them on every call.
var bufPools [40]sync.Pool

func getBuf(n int) []float32 {
	c := bits.Len(uint(n - 1))
	if p, ok := bufPools[c].Get().(*[]float32); ok {
		return (*p)[:n]
	}
	return make([]float32, n, 1<<c)
}

func putBuf(b []float32) {
	b = b[:cap(b)]
	bufPools[bits.Len(uint(cap(b)-1))].Put(&b)
}

// interleave writes rows of src (kc values each, starting at o, ld apart)
// into dst as columns of a w-wide strip: dst[p·w+r] = src[o+r·ld+p]. It
// transposes blocks of 8 or 4 rows by 8 values in vector registers where
// it can; the rest goes four rows at a time, so that each pass over k
// reads four streams and writes four adjacent values.
func interleave(dst []float32, w int, src []float32, o, ld, rows, kc int) {
	r, done := 0, 0 // rows [0, r) have k [0, done) written
	if haveTranspose && kc >= 8 {
		done = kc &^ 7
		for ; r+4 <= rows; r += 4 {
			n := 4
			if r+8 <= rows {
				n = 8
			}
			last := o + (r+n-1)*ld
			_ = src[last : last+kc]   // the rows read
			_ = dst[(done-1)*w+r+n-1] // the last value written
			if n == 8 {
				transpose8(&dst[r], w, &src[o+r*ld], ld, done/8)
				r += 4
			} else {
				transpose4(&dst[r], w, &src[o+r*ld], ld, done/8)
			}
		}
	}
	interleaveGo(dst, w, src, o, ld, 0, r, done, kc)
	interleaveGo(dst, w, src, o, ld, r, rows, 0, kc)
}

// interleaveGo is interleave for rows [r0, r1) and k [p0, kc) in Go.
func interleaveGo(dst []float32, w int, src []float32, o, ld, r0, r1, p0, kc int) {
	if p0 >= kc {
		return
	}
	r := r0
	for ; r+4 <= r1; r += 4 {
		s0 := src[o+r*ld+p0 : o+r*ld+kc]
		s1 := src[o+(r+1)*ld+p0:][:len(s0)]
		s2 := src[o+(r+2)*ld+p0:][:len(s0)]
		s3 := src[o+(r+3)*ld+p0:][:len(s0)]
		d := dst[p0*w+r:]
		for p := range s0 {
			q := d[p*w : p*w+4 : p*w+4]
			q[0], q[1], q[2], q[3] = s0[p], s1[p], s2[p], s3[p]
		}
	}
	for ; r < r1; r++ {
		s0 := src[o+r*ld+p0 : o+r*ld+kc]
		d := dst[p0*w+r:]
		for p, v := range s0 {
			d[p*w] = v
		}
	}
}
