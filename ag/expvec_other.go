//go:build !amd64 || purego

package ag

// expVecSIMD has no vector kernel on this platform.
func expVecSIMD(x []float32) int { return 0 }
