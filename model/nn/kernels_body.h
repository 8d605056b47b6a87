// Kernel bodies shared by kernels_avx512.c, kernels_avx2.c and
// kernels_base.c: each includes this file with its own target and KFN suffix
// (see kernels_c.go). Loops are written so gcc vectorises them: branch-free
// bodies, omp simd reductions, no fminf/fmaxf (gcc calls those out of line).
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <immintrin.h>

// Without trapping math gcc if-converts the clamps (AVX2 has no masked ops);
// without errno sqrtf becomes an instruction. cgo refuses these as flags.
#pragma GCC optimize("no-trapping-math", "no-math-errno")


// vexp: the same Cephes expf polynomial as the Go expf, branch-free so
// loops over it vectorise. Inputs are clamped to [-87, 88].
// The clamp bounds are (never written) globals, not constants: with
// constants gcc splits expressions around the clamps and evaluates the
// clamped branch in every lane, and in SiLU that branch, g * sigmoid(-88),
// is subnormal for all but huge g: a microcode assist per vector (4x slower).
float KFN(k_exp_lo) = -87.0f, KFN(k_exp_hi) = 88.0f;

static inline float vexp(float x) {
	x = x < KFN(k_exp_lo) ? KFN(k_exp_lo) : x; // not fminf/fmaxf: gcc calls those out of line
	x = x > KFN(k_exp_hi) ? KFN(k_exp_hi) : x;
	// n = round(x / ln2) by the 1.5*2^23 trick: floorf may become a libcall
	float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
	float r = x - n * 0.693359375f;
	r = r + n * 2.12194440e-4f;
	float p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * (r * r) + r + 1.0f;
	union { int32_t i; float f; } scale = {((int32_t)n + 127) << 23}; // 2^n
	return p * scale.f;
}

static inline float row_max(const float* x, int n) {
	float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
	for (int i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
	return mx;
}

static inline float softmax_row(float* x, int n) {
	float mx = row_max(x, n), sum = 0;
#pragma omp simd reduction(+ : sum)
	for (int i = 0; i < n; i++) {
		float e = vexp(x[i] - mx);
		x[i] = e;
		sum += e;
	}
	float inv = 1.0f / sum;
#pragma omp simd
	for (int i = 0; i < n; i++) x[i] *= inv;
	return mx + logf(sum);
}

// k_attn_softmax runs each row over whole vectors when the row stride
// allows, instead of a scalar remainder loop per pass (a third of the
// time): the masked keys up to the next multiple of 16 are set to max - 80
// for the exponential and sum passes (e^-80 ~ 2e-35 each vanishes in a sum
// >= 1; not -inf, whose clamped exponential, scaled by 1/sum, would be
// subnormal, a microcode assist per vector) and zeroed after.
void KFN(k_attn_softmax)(float* s, int rows, int ld, int t0, float* lse) {
	for (int r = 0; r < rows; r++) {
		int n = t0 + r + 1 < ld ? t0 + r + 1 : ld, nv = (n + 15) & ~15;
		float* x = s + (long)r * ld;
		if (nv > ld) nv = n;
		float mx = row_max(x, n), sum = 0;
		for (int j = n; j < nv; j++) x[j] = mx - 80.0f;
#pragma omp simd reduction(+ : sum)
		for (int j = 0; j < nv; j++) {
			float e = vexp(x[j] - mx);
			x[j] = e;
			sum += e;
		}
		float inv = 1.0f / sum;
#pragma omp simd
		for (int j = 0; j < nv; j++) x[j] *= inv;
		lse[r] = mx + logf(sum);
		memset(x + n, 0, sizeof(float) * (ld - n));
	}
}

void KFN(k_attn_softmax_bwd)(float* p, float* dp, int rows, int ld, int t0, const float* lse,
                            const float* dy, const float* y, int ldy, int dh) {
	for (int r = 0; r < rows; r++) {
		int n = t0 + r + 1 < ld ? t0 + r + 1 : ld;
		float d = 0;
		const float *dyr = dy + (long)r * ldy, *yr = y + (long)r * ldy;
#pragma omp simd reduction(+ : d)
		for (int j = 0; j < dh; j++) d += dyr[j] * yr[j];
		float *pr = p + (long)r * ld, *dr = dp + (long)r * ld, l = lse[r];
#pragma omp simd
		for (int j = 0; j < n; j++) {
			float e = vexp(pr[j] - l);
			pr[j] = e;
			dr[j] = e * (dr[j] - d);
		}
		memset(pr + n, 0, sizeof(float) * (ld - n));
		memset(dr + n, 0, sizeof(float) * (ld - n));
	}
}

void KFN(k_attn_grad_scores)(const float* p, float* dp, int rows, int ld, const float* dy, const float* y,
                             int ldy, int dh) {
	for (int r = 0; r < rows; r++) {
		float d = 0;
		const float *dyr = dy + (long)r * ldy, *yr = y + (long)r * ldy, *pr = p + (long)r * ld;
		float* dr = dp + (long)r * ld;
#pragma omp simd reduction(+ : d)
		for (int j = 0; j < dh; j++) d += dyr[j] * yr[j];
#pragma omp simd
		for (int j = 0; j < ld; j++) dr[j] = pr[j] * (dr[j] - d);
	}
}

void KFN(k_xent_fwd)(const float* logits, int rows, int v, const int32_t* targets, float* lse, float* loss) {
	for (int r = 0; r < rows; r++) {
		loss[r] = 0;
		if (targets[r] < 0) continue;
		const float* x = logits + (long)r * v;
		float mx = row_max(x, v), sum = 0;
#pragma omp simd reduction(+ : sum)
		for (int j = 0; j < v; j++) sum += vexp(x[j] - mx);
		lse[r] = mx + logf(sum);
		loss[r] = lse[r] - x[targets[r]];
	}
}

void KFN(k_xent_bwd)(float* logits, int rows, int v, const int32_t* targets, const float* lse, float inv) {
	for (int r = 0; r < rows; r++) {
		float* x = logits + (long)r * v;
		if (targets[r] < 0) {
			memset(x, 0, sizeof(float) * v);
			continue;
		}
		float l = lse[r];
#pragma omp simd
		for (int j = 0; j < v; j++) x[j] = vexp(x[j] - l) * inv;
		x[targets[r]] -= inv;
	}
}

void KFN(k_swiglu)(float* h, const float* gu, int rows, int f) {
	for (int r = 0; r < rows; r++) {
		const float *g = gu + (long)r * 2 * f, *u = g + f;
		float* hr = h + (long)r * f;
#pragma omp simd
		for (int j = 0; j < f; j++) hr[j] = g[j] / (1.0f + vexp(-g[j])) * u[j];
	}
}

void KFN(k_swiglu_bwd)(float* dgu, const float* dh, const float* gu, int rows, int f) {
	for (int r = 0; r < rows; r++) {
		const float *g = gu + (long)r * 2 * f, *u = g + f, *d = dh + (long)r * f;
		float *dg = dgu + (long)r * 2 * f, *du = dg + f;
#pragma omp simd
		for (int j = 0; j < f; j++) {
			float s = 1.0f / (1.0f + vexp(-g[j]));
			du[j] = d[j] * g[j] * s;
			dg[j] = d[j] * u[j] * s * (1.0f + g[j] * (1.0f - s));
		}
	}
}

void KFN(k_rmsnorm)(float* out, float* rstd, const float* x, const float* w, int rows, int c, float eps) {
	for (int i = 0; i < rows; i++) {
		const float* xr = x + (long)i * c;
		float ss = 0;
#pragma omp simd reduction(+ : ss)
		for (int j = 0; j < c; j++) ss += xr[j] * xr[j];
		float r = 1.0f / sqrtf(ss / c + eps);
		if (rstd) rstd[i] = r;
		float* o = out + (long)i * c;
#pragma omp simd
		for (int j = 0; j < c; j++) o[j] = w[j] * (xr[j] * r);
	}
}

void KFN(k_rmsnorm_bwd)(float* dx, float* dw, const float* dout, const float* x, const float* rstd,
                       const float* w, int rows, int c) {
	for (int i = 0; i < rows; i++) {
		const float *xr = x + (long)i * c, *dor = dout + (long)i * c;
		float* dxr = dx + (long)i * c;
		float r = rstd[i], dot = 0;
#pragma omp simd reduction(+ : dot)
		for (int j = 0; j < c; j++) {
			float xhat = xr[j] * r;
			dw[j] += dor[j] * xhat;
			dot += dor[j] * w[j] * xhat;
		}
		dot /= c;
#pragma omp simd
		for (int j = 0; j < c; j++) dxr[j] += r * (dor[j] * w[j] - xr[j] * r * dot);
	}
}

void KFN(k_rope)(float* x, int rows, long ld, int nvec, int dh, const float* cs, const float* sn, int t0, int T,
                int inverse) {
	int half = dh / 2;
	float sign = inverse ? -1.0f : 1.0f;
	for (int r = 0; r < rows; r++) {
		int t = (t0 + r) % T;
		const float *c = cs + (long)t * half, *s = sn + (long)t * half;
		for (int h = 0; h < nvec; h++) {
			float *a = x + (long)r * ld + (long)h * dh, *b = a + half;
#pragma omp simd
			for (int i = 0; i < half; i++) {
				float x1 = a[i], x2 = b[i], si = sign * s[i];
				a[i] = x1 * c[i] - x2 * si;
				b[i] = x2 * c[i] + x1 * si;
			}
		}
	}
}

double KFN(k_sumsq)(const float* x, long n) {
	double s = 0;
#pragma omp simd reduction(+ : s)
	for (long i = 0; i < n; i++) s += (double)x[i] * (double)x[i];
	return s;
}

// ---- GCC vector types of one register: VW floats (zmm on AVX-512, ymm on
// AVX2, xmm on the baseline build; a wider type than the ISA's registers
// compiles to element-wise code, 20x slower) ----
#if defined(K_AVX512)
#define VW 16
#elif defined(K_AVX2)
#define VW 8
#else
#define VW 4
#endif
// Only static inline functions take or return vf: the ABI note is moot.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float vf __attribute__((vector_size(VW * 4)));
static inline vf vf_load(const float* p) { vf r; memcpy(&r, p, sizeof r); return r; }
#define vf_store(p, x) do { vf vf_tmp_ = (x); memcpy((p), &vf_tmp_, sizeof vf_tmp_); } while (0)

// k_adamw runs VW floats at a time on vf: with math errno on (cgo refuses
// -fno-math-errno, and the optimize pragma does not reach it) gcc will not
// vectorise sqrtf, so the square root is the ISA's intrinsic.
static inline void vf_sqrt(vf* x) { // in place: a vf argument would draw an ABI note
#if defined(K_AVX512)
	*x = (vf)_mm512_sqrt_ps((__m512)*x);
#elif defined(K_AVX2)
	*x = (vf)_mm256_sqrt_ps((__m256)*x);
#else
	*x = (vf)_mm_sqrt_ps((__m128)*x);
#endif
}

void KFN(k_adamw)(float* p, const float* g, float* m, float* v, long n, float b1, float b2, float eps,
                 float decay, float step_size, float bc2sqrt) {
	long i = 0;
	for (; i + VW <= n; i += VW) {
		vf gi = vf_load(g + i);
		vf mi = b1 * vf_load(m + i) + (1 - b1) * gi;
		vf vi = b2 * vf_load(v + i) + (1 - b2) * gi * gi;
		vf_store(m + i, mi);
		vf_store(v + i, vi);
		vf root = vi;
		vf_sqrt(&root);
		vf_store(p + i, vf_load(p + i) * decay - step_size * mi / (root / bc2sqrt + eps));
	}
	for (; i < n; i++) {
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) / bc2sqrt + eps);
	}
}

// ---- fused attention for head sizes that are multiples of 32 ----
//
// Every product of attention is written as one register-tiled micro-kernel,
// tile_rows: ATTN_ROWS rows of C, 32 columns wide (32/VW vectors), C[r][0:32]
// = alpha * sum_p A(r, p) * B[p][0:32], with A read through (row, column)
// strides so transposed operands need no copy. ATTN_ROWS is set per build
// to what the registers hold (8 x 2 zmm, 2 x 4 ymm, 1 x 8 xmm).
#ifndef ATTN_ROWS
#define ATTN_ROWS 2
#endif
#define ATTN_BLOCK 64 // query rows per block: must equal attnBlock in model.go


#define NV (32 / VW) // vectors per 32-column row of a tile

static inline __attribute__((always_inline)) void tile_rows(const int R, int k, float alpha, const float* a,
		long lar, long lac, const float* b, long ldb, float* c, long ldc, int acc) {
	vf t[ATTN_ROWS][NV];
	for (int r = 0; r < R; r++)
		for (int v = 0; v < NV; v++) t[r][v] = (vf){0};
	for (int p = 0; p < k; p++) {
		vf bv[NV];
		for (int v = 0; v < NV; v++) bv[v] = vf_load(b + p * ldb + v * VW);
		const float* ap = a + p * lac;
		for (int r = 0; r < R; r++) {
			float s = ap[r * lar];
			for (int v = 0; v < NV; v++) t[r][v] += s * bv[v];
		}
	}
	for (int r = 0; r < R; r++)
		for (int v = 0; v < NV; v++) {
			vf x = t[r][v] * alpha;
			if (acc) x += vf_load(c + r * ldc + v * VW);
			vf_store(c + r * ldc + v * VW, x);
		}
}

// gemm32 runs tile_rows over m rows of C (m × 32), k terms in chunks of
// ATTN_KC so the chunk of B stays in L1 across the row tiles. causal 1:
// rows r0.. need only terms p < base+r0+R (queries times keys); causal 2:
// rows (keys) r0.. only terms p >= r0-base (keys times queries); 0: all.
#define ATTN_KC 128
static void gemm32(int m, int k, float alpha, const float* a, long lar, long lac, const float* b, long ldb,
		float* c, long ldc, int acc, int causal, int base) {
	for (int k0 = 0; k0 == 0 || k0 < k; k0 += ATTN_KC) {
		int k1 = k0 + ATTN_KC < k ? k0 + ATTN_KC : k, add = acc || k0 > 0;
		for (int r0 = 0; r0 < m; r0 += ATTN_ROWS) {
			int R = m - r0 < ATTN_ROWS ? m - r0 : ATTN_ROWS, lo = k0, hi = k1;
			if (causal == 1 && base + r0 + R < hi) hi = base + r0 + R;
			if (causal == 2 && r0 - base > lo) lo = r0 - base;
			if (hi < lo) hi = lo;
			if (hi == lo && add) continue;
			const float* ar = a + r0 * lar + lo * lac;
			const float* br = b + lo * ldb;
			float* cr = c + r0 * ldc;
			if (R == ATTN_ROWS)
				tile_rows(ATTN_ROWS, hi - lo, alpha, ar, lar, lac, br, ldb, cr, ldc, add);
			else
				for (int r = 0; r < R; r++)
					tile_rows(1, hi - lo, alpha, ar + r * lar, lar, lac, br, ldb, cr + r * ldc, ldc, add);
		}
	}
}

// Score blocks are (rows, n) with n = i1 rounded up to 32, rows n+16
// floats apart: with n a multiple of 512 bytes the rows of a block would
// share a few cache sets, which the keys-major reads of dk and dv thrash.
// attnWidth in model.go gives the same stride.

// Heads are strided views (rows 3C or C apart), which puts a head's rows in
// a handful of cache sets; the kernels first copy them into contiguous
// buffers of tp rows (tp = T rounded up to 32, zero rows beyond T).

// pack_rows copies x (T, dh), rows ld apart, into xc (tp, dh).
// Rows 3C apart defeat the hardware prefetchers: prefetch 16 rows ahead.
static void pack_rows(float* xc, const float* x, long ld, int T, int dh, int tp) {
	for (int t = 0; t < T; t++) {
		const float* ahead = x + (long)(t + 16 < T ? t + 16 : t) * ld;
		for (int d = 0; d < dh; d += 16) __builtin_prefetch(ahead + d);
		memcpy(xc + (long)t * dh, x + (long)t * ld, sizeof(float) * dh);
	}
	memset(xc + (long)T * dh, 0, sizeof(float) * (tp - T) * dh);
}

// unpack_rows copies xc (T, dh) out to x, rows ld apart.
static void unpack_rows(float* x, long ld, const float* xc, int T, int dh) {
	for (int t = 0; t < T; t++) {
		float* ahead = x + (long)(t + 16 < T ? t + 16 : t) * ld;
		for (int d = 0; d < dh; d += 16) __builtin_prefetch(ahead + d, 1);
		memcpy(x + (long)t * ld, xc + (long)t * dh, sizeof(float) * dh);
	}
}

// pack_panels writes x^T (dh, tp) as tp/32 panels of (dh, 32), panel j at
// xp + j*32*dh: the B operand of a product with x^T, 32 keys at a time.
static void pack_panels(float* xp, const float* x, long ld, int T, int dh, int tp) {
	for (int j = 0; j < tp; j += 32) {
		float* pan = xp + (long)j * dh;
		for (int c = 0; c < 32; c++) {
			const float* xr = x + (long)(j + c) * ld;
			if (j + c + 16 < T)
				for (int d = 0; d < dh; d += 16) __builtin_prefetch(xr + 16 * ld + d);
			if (j + c < T)
				for (int d = 0; d < dh; d++) pan[d * 32 + c] = xr[d];
			else
				for (int d = 0; d < dh; d++) pan[d * 32 + c] = 0;
		}
	}
}

// k_attn_fwd is one (batch, head) of causal attention: y (T, dh) and lse (T)
// from q, k, v (T, dh), rows strided by ld (y by ldy). Score blocks go to
// probs: every block kept one after the other when keep (the layout of
// blockOffset), else the same scratch block reused. work holds 4*tp*dh.
void KFN(k_attn_fwd)(const float* q, const float* k, const float* v, long ld, float* y, long ldy, float* lse,
		float* probs, int keep, float* work, int T, int dh, float scale) {
	int tp = (T + 31) & ~31;
	float *qc = work, *vc = qc + (long)tp * dh, *kp = vc + (long)tp * dh, *yc = kp + (long)tp * dh;
	pack_rows(qc, q, ld, T, dh, tp);
	pack_rows(vc, v, ld, T, dh, tp);
	pack_panels(kp, k, ld, T, dh, tp);
	float* s = probs;
	for (int i0 = 0; i0 < T; i0 += ATTN_BLOCK) {
		int i1 = i0 + ATTN_BLOCK < T ? i0 + ATTN_BLOCK : T, rows = i1 - i0, n = (i1 + 31) & ~31, lds = n + 16;
		// s = q[i0:i1] k[:i1]^T * scale, by 32 keys; row tiles wholly left of
		// the diagonal are skipped (the softmax zeroes them)
		for (int n0 = 0; n0 < n; n0 += 32) {
			int first = n0 - i0 > 0 ? n0 - i0 : 0; // first row that sees key n0
			first = first / ATTN_ROWS * ATTN_ROWS;
			if (first >= rows) break;
			gemm32(rows - first, dh, scale, qc + (long)(i0 + first) * dh, dh, 1, kp + (long)n0 * dh, 32,
			       s + (long)first * lds + n0, lds, 0, 0, 0);
		}
		KFN(k_attn_softmax)(s, rows, lds, i0, lse + i0);
		// y[i0:i1] = p v[:i1], each row tile only up to its last key
		for (int d0 = 0; d0 < dh; d0 += 32)
			gemm32(rows, i1, 1, s, lds, 1, vc + d0, dh, yc + (long)i0 * dh + d0, dh, 0, 1, i0);
		if (keep) s += (long)rows * lds;
	}
	unpack_rows(y, ldy, yc, T, dh);
}

// k_attn_bwd is the backward of k_attn_fwd for one (batch, head): dq, dk, dv
// (T, dh, rows strided by ld; all overwritten) from dy and y (ldy). With
// keep, probs holds every block's probabilities; else they are recomputed
// from q, k and lse into scratch p (ATTN_BLOCK, tp). dp is (ATTN_BLOCK, tp)
// scratch, work 8*tp*dh.
void KFN(k_attn_bwd)(const float* q, const float* k, const float* v, float* dq, float* dk, float* dv, long ld,
		const float* y, const float* dy, long ldy, const float* lse, float* probs, int keep, float* p, float* dp,
		float* work, int T, int dh, float scale) {
	int tp = (T + 31) & ~31;
	long sz = (long)tp * dh;
	float *qc = work, *kc = qc + sz, *dyc = kc + sz, *kp = dyc + sz, *vp = kp + sz, *dqc = vp + sz, *dkc = dqc + sz,
	      *dvc = dkc + sz;
	pack_rows(qc, q, ld, T, dh, tp);
	pack_rows(kc, k, ld, T, dh, tp);
	pack_rows(dyc, dy, ldy, T, dh, tp);
	pack_panels(vp, v, ld, T, dh, tp);
	if (!keep) pack_panels(kp, k, ld, T, dh, tp);
	memset(dkc, 0, sizeof(float) * sz);
	memset(dvc, 0, sizeof(float) * sz);
	float* ps = probs;
	for (int i0 = 0; i0 < T; i0 += ATTN_BLOCK) {
		int i1 = i0 + ATTN_BLOCK < T ? i0 + ATTN_BLOCK : T, rows = i1 - i0, n = (i1 + 31) & ~31, lds = n + 16;
		const float *dyb = dyc + (long)i0 * dh, *qb = qc + (long)i0 * dh;
		// dp = dy v^T  (rows, n)
		for (int n0 = 0; n0 < n; n0 += 32)
			gemm32(rows, dh, 1, dyb, dh, 1, vp + (long)n0 * dh, 32, dp + n0, lds, 0, 0, 0);
		const float* pb;
		if (keep) {
			KFN(k_attn_grad_scores)(ps, dp, rows, lds, dy + (long)i0 * ldy, y + (long)i0 * ldy, ldy, dh);
			pb = ps;
			ps += (long)rows * lds;
		} else {
			for (int n0 = 0; n0 < n; n0 += 32)
				gemm32(rows, dh, scale, qb, dh, 1, kp + (long)n0 * dh, 32, p + n0, lds, 0, 0, 0);
			KFN(k_attn_softmax_bwd)(p, dp, rows, lds, i0, lse + i0, dy + (long)i0 * ldy, y + (long)i0 * ldy, ldy, dh);
			pb = p;
		}
		for (int d0 = 0; d0 < dh; d0 += 32) {
			// dq[i0:i1] = ds k[:i1] * scale
			gemm32(rows, i1, scale, dp, lds, 1, kc + d0, dh, dqc + (long)i0 * dh + d0, dh, 0, 1, i0);
			// dk[:i1] += ds^T q[i0:i1] * scale; dv[:i1] += p^T dy[i0:i1]; key j
			// only gets rows i >= j
			gemm32(i1, rows, scale, dp, 1, lds, qb + d0, dh, dkc + d0, dh, 1, 2, i0);
			gemm32(i1, rows, 1, pb, 1, lds, dyb + d0, dh, dvc + d0, dh, 1, 2, i0);
		}
	}
	unpack_rows(dq, ld, dqc, T, dh);
	unpack_rows(dk, ld, dkc, T, dh);
	unpack_rows(dv, ld, dvc, T, dh);
}
