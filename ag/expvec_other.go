//go:build !amd64 || purego

package ag

// expVecSIMD has no vector kernel on this platform.
func expVecSIMD(x []float32) int { return 0 }

func sigmoidFromExpSIMD(dst, x, e []float32) int { return 0 }

func tanhFromExpSIMD(dst, x, e []float32) int { return 0 }

func setAVX2(on bool) bool { return false }

func lstmCellSIMD(z, add, bias, c, h, tc []float32) int { return 0 }

func setAVX512(on bool) bool { return false }

func lstmBackSIMD(gates, dg, dh, dc, gout, tc, cprev []float32) int { return 0 }
