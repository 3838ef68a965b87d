package main

import (
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// bench gemm prints one row per product and a column per backend; bad
// flags are usage errors naming the flag.
func TestBenchGEMM(t *testing.T) {
	code, stdout, stderr := runCmd(t, "bench", "gemm", "--time", "1ns", "--rounds", "1", "--threads", "1", "--backends", "gonum")
	if code != 0 || !strings.Contains(stdout, "sgemm 1024³") || !strings.Contains(stdout, "batch-1 LSTM step") || !strings.Contains(stdout, "gonum") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if tensor.GetBackend("simd") != nil && tensor.GetBackend("openblas") != nil {
		code, stdout, _ = runCmd(t, "bench", "gemm", "--time", "1ns", "--rounds", "1", "--threads", "2", "--backends", "openblas,simd")
		if code != 0 || !strings.Contains(stdout, "simd / openblas") {
			t.Fatalf("exit %d\n%s", code, stdout)
		}
	}
	for _, c := range []struct{ args, want string }{
		{"--threads x", "--threads"},
		{"--threads 0", "--threads 0"},
		{"--rounds 0", "--rounds 0"},
		{"--backends nope", `"nope"`},
	} {
		code, _, stderr := runCmd(t, append([]string{"bench", "gemm", "--time", "1ns"}, strings.Fields(c.args)...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q", c.args, code, stderr)
		}
	}
}
