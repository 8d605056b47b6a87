//go:build cgo && !purego && amd64

package nn

/*
#cgo CFLAGS: -O3 -fopenmp-simd
#cgo LDFLAGS: -lm
#include <stdint.h>

// Each kernel exists for AVX-512, AVX2+FMA and baseline x86-64
// (kernels_*.c around kernels_body.h); k_level picks once per process.
static int k_level = -1, k_cpu = -1; // in use; the best the CPU runs
static int k_isa(void) {
	if (k_level < 0) {
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
		    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
			k_cpu = 2;
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			k_cpu = 1;
		else
			k_cpu = 0;
		k_level = k_cpu;
	}
	return k_level;
}
static int k_max(void) { k_isa(); return k_cpu; }
// k_force selects another level for tests (never above what the CPU has;
// comparing with k_cpu, not k_level, lets a test go back up).
static void k_force(int level) { if (level <= k_max()) k_level = level; }
#define PICK(name) (k_isa() == 2 ? name##_avx512 : k_level == 1 ? name##_avx2 : name##_base)

void k_attn_softmax_avx512(float* s, int rows, int ld, int t0, float* lse);
void k_attn_softmax_avx2(float* s, int rows, int ld, int t0, float* lse);
void k_attn_softmax_base(float* s, int rows, int ld, int t0, float* lse);
static void k_attn_softmax(float* s, int rows, int ld, int t0, float* lse) { PICK(k_attn_softmax)(s, rows, ld, t0, lse); }
void k_attn_softmax_bwd_avx512(float* p, float* dp, int rows, int ld, int t0, const float* lse, const float* dy, const float* y, int ldy, int dh);
void k_attn_softmax_bwd_avx2(float* p, float* dp, int rows, int ld, int t0, const float* lse, const float* dy, const float* y, int ldy, int dh);
void k_attn_softmax_bwd_base(float* p, float* dp, int rows, int ld, int t0, const float* lse, const float* dy, const float* y, int ldy, int dh);
static void k_attn_softmax_bwd(float* p, float* dp, int rows, int ld, int t0, const float* lse, const float* dy, const float* y, int ldy, int dh) { PICK(k_attn_softmax_bwd)(p, dp, rows, ld, t0, lse, dy, y, ldy, dh); }
void k_attn_grad_scores_avx512(const float* p, float* dp, int rows, int ld, const float* dy, const float* y, int ldy, int dh);
void k_attn_grad_scores_avx2(const float* p, float* dp, int rows, int ld, const float* dy, const float* y, int ldy, int dh);
void k_attn_grad_scores_base(const float* p, float* dp, int rows, int ld, const float* dy, const float* y, int ldy, int dh);
static void k_attn_grad_scores(const float* p, float* dp, int rows, int ld, const float* dy, const float* y, int ldy, int dh) { PICK(k_attn_grad_scores)(p, dp, rows, ld, dy, y, ldy, dh); }
void k_xent_fwd_avx512(const float* logits, int rows, int v, const int32_t* targets, float* lse, float* loss);
void k_xent_fwd_avx2(const float* logits, int rows, int v, const int32_t* targets, float* lse, float* loss);
void k_xent_fwd_base(const float* logits, int rows, int v, const int32_t* targets, float* lse, float* loss);
static void k_xent_fwd(const float* logits, int rows, int v, const int32_t* targets, float* lse, float* loss) { PICK(k_xent_fwd)(logits, rows, v, targets, lse, loss); }
void k_xent_bwd_avx512(float* logits, int rows, int v, const int32_t* targets, const float* lse, float inv);
void k_xent_bwd_avx2(float* logits, int rows, int v, const int32_t* targets, const float* lse, float inv);
void k_xent_bwd_base(float* logits, int rows, int v, const int32_t* targets, const float* lse, float inv);
static void k_xent_bwd(float* logits, int rows, int v, const int32_t* targets, const float* lse, float inv) { PICK(k_xent_bwd)(logits, rows, v, targets, lse, inv); }
void k_swiglu_avx512(float* h, const float* gu, int rows, int f);
void k_swiglu_avx2(float* h, const float* gu, int rows, int f);
void k_swiglu_base(float* h, const float* gu, int rows, int f);
static void k_swiglu(float* h, const float* gu, int rows, int f) { PICK(k_swiglu)(h, gu, rows, f); }
void k_swiglu_bwd_avx512(float* dgu, const float* dh, const float* gu, int rows, int f);
void k_swiglu_bwd_avx2(float* dgu, const float* dh, const float* gu, int rows, int f);
void k_swiglu_bwd_base(float* dgu, const float* dh, const float* gu, int rows, int f);
static void k_swiglu_bwd(float* dgu, const float* dh, const float* gu, int rows, int f) { PICK(k_swiglu_bwd)(dgu, dh, gu, rows, f); }
void k_rmsnorm_avx512(float* out, float* rstd, const float* x, const float* w, int rows, int c, float eps);
void k_rmsnorm_avx2(float* out, float* rstd, const float* x, const float* w, int rows, int c, float eps);
void k_rmsnorm_base(float* out, float* rstd, const float* x, const float* w, int rows, int c, float eps);
static void k_rmsnorm(float* out, float* rstd, const float* x, const float* w, int rows, int c, float eps) { PICK(k_rmsnorm)(out, rstd, x, w, rows, c, eps); }
void k_rmsnorm_bwd_avx512(float* dx, float* dw, const float* dout, const float* x, const float* rstd, const float* w, int rows, int c);
void k_rmsnorm_bwd_avx2(float* dx, float* dw, const float* dout, const float* x, const float* rstd, const float* w, int rows, int c);
void k_rmsnorm_bwd_base(float* dx, float* dw, const float* dout, const float* x, const float* rstd, const float* w, int rows, int c);
static void k_rmsnorm_bwd(float* dx, float* dw, const float* dout, const float* x, const float* rstd, const float* w, int rows, int c) { PICK(k_rmsnorm_bwd)(dx, dw, dout, x, rstd, w, rows, c); }
void k_adamw_avx512(float* p, const float* g, float* m, float* v, long n, float b1, float b2, float eps, float decay, float step_size, float bc2sqrt);
void k_adamw_avx2(float* p, const float* g, float* m, float* v, long n, float b1, float b2, float eps, float decay, float step_size, float bc2sqrt);
void k_adamw_base(float* p, const float* g, float* m, float* v, long n, float b1, float b2, float eps, float decay, float step_size, float bc2sqrt);
static void k_adamw(float* p, const float* g, float* m, float* v, long n, float b1, float b2, float eps, float decay, float step_size, float bc2sqrt) { PICK(k_adamw)(p, g, m, v, n, b1, b2, eps, decay, step_size, bc2sqrt); }
void k_attn_fwd_avx512(const float* q, const float* k, const float* v, long ld, float* y, long ldy, float* lse, float* probs, int keep, float* work, int T, int dh, float scale);
void k_attn_fwd_avx2(const float* q, const float* k, const float* v, long ld, float* y, long ldy, float* lse, float* probs, int keep, float* work, int T, int dh, float scale);
void k_attn_fwd_base(const float* q, const float* k, const float* v, long ld, float* y, long ldy, float* lse, float* probs, int keep, float* work, int T, int dh, float scale);
static void k_attn_fwd(const float* q, const float* k, const float* v, long ld, float* y, long ldy, float* lse, float* probs, int keep, float* work, int T, int dh, float scale) { PICK(k_attn_fwd)(q, k, v, ld, y, ldy, lse, probs, keep, work, T, dh, scale); }
void k_attn_bwd_avx512(const float* q, const float* k, const float* v, float* dq, float* dk, float* dv, long ld, const float* y, const float* dy, long ldy, const float* lse, float* probs, int keep, float* p, float* dp, float* work, int T, int dh, float scale);
void k_attn_bwd_avx2(const float* q, const float* k, const float* v, float* dq, float* dk, float* dv, long ld, const float* y, const float* dy, long ldy, const float* lse, float* probs, int keep, float* p, float* dp, float* work, int T, int dh, float scale);
void k_attn_bwd_base(const float* q, const float* k, const float* v, float* dq, float* dk, float* dv, long ld, const float* y, const float* dy, long ldy, const float* lse, float* probs, int keep, float* p, float* dp, float* work, int T, int dh, float scale);
static void k_attn_bwd(const float* q, const float* k, const float* v, float* dq, float* dk, float* dv, long ld, const float* y, const float* dy, long ldy, const float* lse, float* probs, int keep, float* p, float* dp, float* work, int T, int dh, float scale) { PICK(k_attn_bwd)(q, k, v, dq, dk, dv, ld, y, dy, ldy, lse, probs, keep, p, dp, work, T, dh, scale); }
void k_rope_avx512(float* x, int rows, long ld, int nvec, int dh, const float* cs, const float* sn, int t0, int T, int inverse);
void k_rope_avx2(float* x, int rows, long ld, int nvec, int dh, const float* cs, const float* sn, int t0, int T, int inverse);
void k_rope_base(float* x, int rows, long ld, int nvec, int dh, const float* cs, const float* sn, int t0, int T, int inverse);
static void k_rope(float* x, int rows, long ld, int nvec, int dh, const float* cs, const float* sn, int t0, int T, int inverse) { PICK(k_rope)(x, rows, ld, nvec, dh, cs, sn, t0, T, inverse); }
double k_sumsq_avx512(const float* x, long n);
double k_sumsq_avx2(const float* x, long n);
double k_sumsq_base(const float* x, long n);
static double k_sumsq(const float* x, long n) { return PICK(k_sumsq)(x, n); }
*/
import "C"

import "unsafe"

// kernelLevels lists the C kernel builds this CPU can run, for tests:
// 0 baseline, 1 AVX2, 2 AVX-512.
func kernelLevels() []int {
	var ls []int
	for l := 0; l <= int(C.k_max()); l++ {
		ls = append(ls, l)
	}
	return ls
}

// fusedISAFast reports whether the kernels in use have a vector unit wide
// enough for the fused attention kernels to beat sgemm (AVX2 and up).
func fusedISAFast() bool { return C.k_isa() >= 1 }

// forceKernelLevel makes the C kernels use the given build (tests only).
func forceKernelLevel(l int) { C.k_force(C.int(l)) }

func init() {
	kern = cKernels
	KernelISA = [...]string{"sse2", "avx2", "avx512"}[C.k_isa()]
}

var cKernels = kernelSet{
	attnSoftmax: func(s []float32, rows, ld, t0 int, lse []float32) {
		C.k_attn_softmax(fp(s), C.int(rows), C.int(ld), C.int(t0), fp(lse))
	},
	attnSoftmaxBackward: func(p, dp []float32, rows, ld, t0 int, lse, dy, y []float32, ldy, dh int) {
		C.k_attn_softmax_bwd(fp(p), fp(dp), C.int(rows), C.int(ld), C.int(t0), fp(lse), fp(dy), fp(y), C.int(ldy), C.int(dh))
	},
	attnGradScores: func(p, dp []float32, rows, ld int, dy, y []float32, ldy, dh int) {
		C.k_attn_grad_scores(fp(p), fp(dp), C.int(rows), C.int(ld), fp(dy), fp(y), C.int(ldy), C.int(dh))
	},
	xentForward: func(logits []float32, rows, v int, targets []int32, lse, loss []float32) {
		C.k_xent_fwd(fp(logits), C.int(rows), C.int(v), (*C.int32_t)(unsafe.Pointer(&targets[0])), fp(lse), fp(loss))
	},
	xentBackward: func(logits []float32, rows, v int, targets []int32, lse []float32, inv float32) {
		C.k_xent_bwd(fp(logits), C.int(rows), C.int(v), (*C.int32_t)(unsafe.Pointer(&targets[0])), fp(lse), C.float(inv))
	},
	swiglu: func(h, gu []float32, rows, f int) { C.k_swiglu(fp(h), fp(gu), C.int(rows), C.int(f)) },
	swigluBackward: func(dgu, dh, gu []float32, rows, f int) {
		C.k_swiglu_bwd(fp(dgu), fp(dh), fp(gu), C.int(rows), C.int(f))
	},
	rmsNorm: func(out, rstd, x, w []float32, rows, c int, eps float32) {
		var r *C.float
		if rstd != nil {
			r = fp(rstd)
		}
		C.k_rmsnorm(fp(out), r, fp(x), fp(w), C.int(rows), C.int(c), C.float(eps))
	},
	rmsNormBackward: func(dx, dw, dout, x, rstd, w []float32, rows, c int) {
		C.k_rmsnorm_bwd(fp(dx), fp(dw), fp(dout), fp(x), fp(rstd), fp(w), C.int(rows), C.int(c))
	},
	adamw: func(p, g, m, v []float32, b1, b2, eps, decay, stepSize, bc2sqrt float32) {
		C.k_adamw(fp(p), fp(g), fp(m), fp(v), C.long(len(p)), C.float(b1), C.float(b2), C.float(eps),
			C.float(decay), C.float(stepSize), C.float(bc2sqrt))
	},
	ropeRows: func(x []float32, rows, ld, nvec, dh int, cos, sin []float32, t0, T int, inverse bool) {
		C.k_rope(fp(x), C.int(rows), C.long(ld), C.int(nvec), C.int(dh), fp(cos), fp(sin), C.int(t0), C.int(T), cbool(inverse))
	},
	sumSquares: func(x []float32) float64 { return float64(C.k_sumsq(fp(x), C.long(len(x)))) },
	attnForwardHead: func(q, k, v []float32, ld int, y []float32, ldy int, lse, probs []float32, keep bool, work []float32, T, dh int, scale float32) {
		C.k_attn_fwd(fp(q), fp(k), fp(v), C.long(ld), fp(y), C.long(ldy), fp(lse), fp(probs), cbool(keep), fp(work),
			C.int(T), C.int(dh), C.float(scale))
	},
	attnBackwardHead: func(q, k, v, dq, dk, dv []float32, ld int, y, dy []float32, ldy int, lse, probs []float32, keep bool, p, dp, work []float32, T, dh int, scale float32) {
		var pr *C.float // read only when keep
		if keep {
			pr = fp(probs)
		}
		C.k_attn_bwd(fp(q), fp(k), fp(v), fp(dq), fp(dk), fp(dv), C.long(ld), fp(y), fp(dy), C.long(ldy), fp(lse),
			pr, cbool(keep), fp(p), fp(dp), fp(work), C.int(T), C.int(dh), C.float(scale))
	},
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// fp is a C pointer to s's first element (s must not be empty).
func fp(s []float32) *C.float { return (*C.float)(unsafe.Pointer(&s[0])) }
