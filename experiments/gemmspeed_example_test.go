package experiments_test

import (
	"os"
	"time"

	"github.com/textarmor/textarmor/experiments"
)

// A GEMM speed report as `textarmor bench gemm` prints it (a measured one
// comes from experiments.RunGEMMSpeed).
func ExampleGEMMSpeedReport_WriteTable() {
	r := &experiments.GEMMSpeedReport{
		Names: []string{"openblas", "simd"}, Backends: []string{"openblas (OpenBLAS 0.3.21)", "simd (avx512)"},
		Rounds: 5, MinTime: 100 * time.Millisecond, Threads: []int{1}, Cores: 2,
		Shapes: []experiments.GEMMShape{{Name: "sgemm 1024³", M: 1024, N: 1024, K: 1024}},
		Cells: []experiments.GEMMCell{
			{Shape: "sgemm 1024³", Backend: "openblas", Threads: 1, GFLOPs: 180.6},
			{Shape: "sgemm 1024³", Backend: "simd", Threads: 1, GFLOPs: 140.2},
		},
	}
	r.WriteTable(os.Stdout)
	// Output:
	// GFLOP/s, median of 5 interleaved rounds (each the fastest run over 100ms); 2 cores
	//   openblas: openblas (OpenBLAS 0.3.21)
	//   simd: simd (avx512)
	//
	// 1 thread(s)
	// product      m×n×k (ᵀ: B transposed)  openblas  simd   simd / openblas
	// sgemm 1024³  1024×1024×1024           180.6     140.2  78 %
}
