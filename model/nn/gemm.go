package nn

import (
	"runtime"
	"sync"
)

// sgemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices, on
// the calling goroutine only: op(A) is m×k, op(B) is k×n, C is m×n, and
// lda/ldb/ldc are row strides. It is OpenBLAS (single-threaded) in cgo
// builds and goSgemm otherwise; tests swap it to compare the two.
var sgemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) = goSgemm

// BLASName names the matrix backend in use ("openblas <core>" or "go").
var BLASName = "go"

// workers is the number of goroutines a parallel region uses.
func workers() int { return runtime.GOMAXPROCS(0) }

// parallelFor splits [0, n) into one contiguous chunk per worker and runs
// fn(worker, lo, hi) on each concurrently. Chunking is fixed by n and the
// worker count, so results are deterministic for a given GOMAXPROCS.
func parallelFor(n int, fn func(w, lo, hi int)) {
	p := workers()
	if p > n {
		p = n
	}
	if p <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	var wg sync.WaitGroup
	wg.Add(p - 1)
	for w := 1; w < p; w++ {
		go func(w int) {
			defer wg.Done()
			fn(w, n*w/p, n*(w+1)/p)
		}(w)
	}
	fn(0, 0, n/p)
	wg.Wait()
}

// linear computes out = in @ W^T (+ out when accumulate): in (N, I), W (O, I)
// as stored by HF ([out, in]), out (N, O). Work is split over rows when there
// are enough of them, else over output features (single-token decoding).
func linear(out, in, w []float32, n, inDim, outDim int, accumulate bool) {
	beta := float32(0)
	if accumulate {
		beta = 1
	}
	if n >= 4*workers() {
		parallelFor(n, func(_, lo, hi int) {
			sgemm(false, true, hi-lo, outDim, inDim, 1, in[lo*inDim:], inDim, w, inDim, beta, out[lo*outDim:], outDim)
		})
		return
	}
	parallelFor(outDim, func(_, lo, hi int) {
		sgemm(false, true, n, hi-lo, inDim, 1, in, inDim, w[lo*inDim:], inDim, beta, out[lo:], outDim)
	})
}

// linearBackward computes the gradients of out = in @ W^T:
// dIn (N, I) = dOut @ W (overwritten) and dW (O, I) += dOut^T @ in. Each
// worker takes a block of rows of dIn and a block of rows of dW in the same
// region. (Splitting dW by rows of the product instead, so each worker packs
// only its rows of in, measured 3% slower per step: the partial sums need
// a reduction pass.)
func linearBackward(dIn, dW, dOut, in, w []float32, n, inDim, outDim int) {
	parallelFor(workers(), func(wk, _, _ int) {
		p := workers()
		lo, hi := n*wk/p, n*(wk+1)/p
		if hi > lo && dIn != nil {
			sgemm(false, false, hi-lo, inDim, outDim, 1, dOut[lo*outDim:], outDim, w, inDim, 0, dIn[lo*inDim:], inDim)
		}
		olo, ohi := outDim*wk/p, outDim*(wk+1)/p
		if ohi > olo {
			sgemm(true, false, ohi-olo, inDim, n, 1, dOut[olo:], outDim, in, inDim, 1, dW[olo*inDim:], inDim)
		}
	})
}
