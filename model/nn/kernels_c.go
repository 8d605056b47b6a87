//go:build cgo && !purego && amd64

package nn

/*
#cgo CFLAGS: -O3 -fopenmp-simd
#cgo LDFLAGS: -lm
#include <stdint.h>

// Each kernel exists for AVX-512, AVX2+FMA and baseline x86-64
// (kernels_*.c around kernels_body.h); k_level picks once per process.
static int k_level = -1;
static int k_isa(void) {
	if (k_level < 0) {
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
		    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
			k_level = 2;
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			k_level = 1;
		else
			k_level = 0;
	}
	return k_level;
}
// k_force selects a lower level for tests (never above what the CPU has).
static void k_force(int level) { if (level <= k_isa()) k_level = level; }
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
*/
import "C"

import "unsafe"

// kernelLevels lists the C kernel builds this CPU can run, for tests:
// 0 baseline, 1 AVX2, 2 AVX-512.
func kernelLevels() []int {
	var ls []int
	for l := 0; l <= int(C.k_isa()); l++ {
		ls = append(ls, l)
	}
	return ls
}

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
}

// fp is a C pointer to s's first element (s must not be empty).
func fp(s []float32) *C.float { return (*C.float)(unsafe.Pointer(&s[0])) }
