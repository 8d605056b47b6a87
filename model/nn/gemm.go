package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
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

// linearBackwardInput computes dIn (N, I) = dOut @ W (overwritten), one
// block of rows per worker: the step the rest of the backward pass waits on.
func linearBackwardInput(dIn, dOut, w []float32, n, inDim, outDim int) {
	parallelFor(n, func(_, lo, hi int) {
		sgemm(false, false, hi-lo, inDim, outDim, 1, dOut[lo*outDim:], outDim, w, inDim, 0, dIn[lo*inDim:], inDim)
	})
}

// weightGrad is a linear layer's dW (O, I) += dOut^T @ in, as one task per
// worker (a block of dW's rows each). Nothing waits on it until the
// optimizer step, so it runs alongside the next elementwise or attention
// step of the backward pass (see alongside). (Finer dW blocks would balance
// the workers by themselves but repack the long (N, I) operand per block:
// three blocks per worker measured 10% slower per training step.)
type weightGrad struct {
	dW, dOut, in        []float32
	n, inDim, outDim, p int
}

func newWeightGrad(dW, dOut, in []float32, n, inDim, outDim int) weightGrad {
	return weightGrad{dW, dOut, in, n, inDim, outDim, workers()}
}

func (g weightGrad) run(i int) {
	olo, ohi := g.outDim*i/g.p, g.outDim*(i+1)/g.p
	if ohi > olo {
		sgemm(true, false, ohi-olo, g.inDim, g.n, 1, g.dOut[olo:], g.outDim, g.in, g.inDim, 1, g.dW[olo*g.inDim:], g.inDim)
	}
}

// alongside runs g's tasks and then the n small tasks fill(w, i), all in
// one region and each claimed by the first free worker: the worker that
// finishes its dW block first takes the small tasks, so neither waits for
// the other as it did when the dW blocks ended a region.
func (g weightGrad) alongside(n int, fill func(w, i int)) {
	parallelTasks(g.p+n, func(w, i int) {
		if i < g.p {
			g.run(i)
		} else {
			fill(w, i-g.p)
		}
	})
}

// parallelTasks runs tasks 0..n-1 on the workers, each task claimed in
// order by whichever worker is free (a shared counter), so a slower core
// takes fewer of them. A task owns its outputs, so results do not depend on
// which worker ran it; w only selects per-worker scratch.
func parallelTasks(n int, fn func(w, i int)) {
	p := min(workers(), n)
	if p <= 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	run := func(w int) {
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
			fn(w, i)
		}
	}
	var wg sync.WaitGroup
	wg.Add(p - 1)
	for w := 1; w < p; w++ {
		go func(w int) {
			defer wg.Done()
			run(w)
		}(w)
	}
	run(0)
	wg.Wait()
}

// rowChunks splits n rows into the chunks of the small row-wise tasks
// that fill a region: a fixed count, so chunk boundaries (and partial sums
// reduced per chunk) do not depend on the workers.
func rowChunks(n int) int { return min(n, rowChunkCount) }

const rowChunkCount = 16

// chunkRows is chunk i of n rows split into rowChunks(n).
func chunkRows(n, i int) (lo, hi int) {
	k := rowChunks(n)
	return n * i / k, n * (i + 1) / k
}
