package nn

import "sync"

const kc, nc = 128, 512 // goSgemm's panel block: k rows by n columns

var panelPool = sync.Pool{New: func() any { p := make([]float32, kc*nc); return &p }}

// goSgemm is the portable sgemm (see sgemm): op(B) is packed into a
// contiguous k×n panel block by block, then four rows of C are updated at a
// time so each loaded B value feeds four multiply-adds. It reaches a few
// GFLOP/s per core: slow next to OpenBLAS, but correct everywhere.
func goSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
		} else if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
	if m == 0 || n == 0 || k == 0 || alpha == 0 {
		return
	}
	panelPtr := panelPool.Get().(*[]float32)
	defer panelPool.Put(panelPtr)
	panel := *panelPtr
	at := func(i, p int) float32 {
		if transA {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	for j0 := 0; j0 < n; j0 += nc {
		nb := min(nc, n-j0)
		for p0 := 0; p0 < k; p0 += kc {
			kb := min(kc, k-p0)
			// panel[p][j] = op(B)[p0+p][j0+j]
			for p := 0; p < kb; p++ {
				dst := panel[p*nb : p*nb+nb]
				if transB {
					for j := range dst {
						dst[j] = b[(j0+j)*ldb+p0+p]
					}
				} else {
					copy(dst, b[(p0+p)*ldb+j0:(p0+p)*ldb+j0+nb])
				}
			}
			i := 0
			for ; i+4 <= m; i += 4 {
				c0 := c[i*ldc+j0 : i*ldc+j0+nb]
				c1 := c[(i+1)*ldc+j0 : (i+1)*ldc+j0+nb]
				c2 := c[(i+2)*ldc+j0 : (i+2)*ldc+j0+nb]
				c3 := c[(i+3)*ldc+j0 : (i+3)*ldc+j0+nb]
				for p := 0; p < kb; p++ {
					a0, a1, a2, a3 := alpha*at(i, p0+p), alpha*at(i+1, p0+p), alpha*at(i+2, p0+p), alpha*at(i+3, p0+p)
					bp := panel[p*nb : p*nb+nb]
					for j, bv := range bp {
						c0[j] += a0 * bv
						c1[j] += a1 * bv
						c2[j] += a2 * bv
						c3[j] += a3 * bv
					}
				}
			}
			for ; i < m; i++ {
				c0 := c[i*ldc+j0 : i*ldc+j0+nb]
				for p := 0; p < kb; p++ {
					a0 := alpha * at(i, p0+p)
					bp := panel[p*nb : p*nb+nb]
					for j, bv := range bp {
						c0[j] += a0 * bv
					}
				}
			}
		}
	}
}
