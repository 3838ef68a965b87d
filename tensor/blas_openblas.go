//go:build openblas

package tensor

/*
#cgo LDFLAGS: -lopenblas
#include <stdlib.h>
#include <cblas.h>

// Exported by OpenBLAS (driver/others), not declared in cblas.h.
void openblas_read_env(void);
void blas_thread_shutdown_(void);

// shortThreadTimeout makes OpenBLAS's idle worker threads sleep after 2^4
// cycles instead of spinning for 2^28 (its default) unless the user set
// OPENBLAS_THREAD_TIMEOUT: the library read the environment when it was
// loaded, so it re-reads it and restarts its thread pool, which the next
// call builds anew.
static void shortThreadTimeout(void) {
	if (getenv("OPENBLAS_THREAD_TIMEOUT") != NULL) return;
	setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
	openblas_read_env();
	blas_thread_shutdown_();
}
*/
import "C"

import (
	"strings"
	"unsafe"
)

// openblasBackend calls OpenBLAS's cblas_sgemm; it becomes the default
// backend when the openblas build tag is set.
type openblasBackend struct{}

func (openblasBackend) Name() string { return "openblas" }

func (openblasBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans), C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// Kernel is OpenBLAS's build configuration and the core type whose kernels
// it runs (OPENBLAS_CORETYPE overrides the detected one), such as
// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64".
func (openblasBackend) Kernel() string {
	cfg := C.GoString(C.openblas_get_config())
	core := C.GoString(C.openblas_get_corename())
	if core != "" && !strings.Contains(strings.ToLower(cfg), strings.ToLower(core)) {
		cfg += ", core " + core
	}
	return strings.TrimSpace(cfg)
}

func (openblasBackend) Threads() int     { return int(C.openblas_get_num_threads()) }
func (openblasBackend) SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// openblasBuild: see blas_noopenblas.go.
const openblasBuild = true

// Between the GEMMs of a forward pass the engine runs its own kernels
// (GELU, softmax, LayerNorm) on every core; OpenBLAS's default of spinning
// idle threads for about 0.1 s took a core from them (a transformer
// training step: 1.43 s, 1.15 s with the short timeout, same numbers).
func init() {
	C.shortThreadTimeout()
	Register(openblasBackend{}, true)
}
