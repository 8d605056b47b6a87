//go:build cgo && !purego

package nn

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
void openblas_set_num_threads(int);
char* openblas_get_corename(void);
*/
import "C"

import "unsafe"

// OpenBLAS runs single-threaded: Go splits each matrix product across
// GOMAXPROCS goroutines, which measured faster here than OpenBLAS's own
// threads for the small, many matrices of a transformer step.
func init() {
	C.openblas_set_num_threads(1)
	sgemm = blasSgemm
	BLASName = "openblas " + C.GoString(C.openblas_get_corename())
}

// blasSgemm is sgemm through cblas_sgemm.
func blasSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans), C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	if k == 0 {
		// cblas requires valid pointers even for an empty product.
		goSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}
