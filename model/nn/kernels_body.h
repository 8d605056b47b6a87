// Kernel bodies shared by kernels_avx512.c, kernels_avx2.c and
// kernels_base.c: each includes this file with its own target and KFN suffix
// (see kernels_c.go). Loops are written so gcc vectorises them: branch-free
// bodies, omp simd reductions, no fminf/fmaxf (gcc calls those out of line).
#include <stdint.h>
#include <string.h>
#include <math.h>

// Without trapping math gcc if-converts the clamps (AVX2 has no masked ops);
// without errno sqrtf becomes an instruction. cgo refuses these as flags.
#pragma GCC optimize("no-trapping-math", "no-math-errno")


// vexp: the same Cephes expf polynomial as the Go expf, branch-free so
// loops over it vectorise. Inputs are clamped to [-87, 88].
static inline float vexp(float x) {
	x = x < -87.0f ? -87.0f : x; // not fminf/fmaxf: gcc calls those out of line
	x = x > 88.0f ? 88.0f : x;
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

void KFN(k_attn_softmax)(float* s, int rows, int ld, int t0, float* lse) {
	for (int r = 0; r < rows; r++) {
		int n = t0 + r + 1 < ld ? t0 + r + 1 : ld;
		lse[r] = softmax_row(s + (long)r * ld, n);
		memset(s + (long)r * ld + n, 0, sizeof(float) * (ld - n));
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

void KFN(k_adamw)(float* p, const float* g, float* m, float* v, long n, float b1, float b2, float eps,
                 float decay, float step_size, float bc2sqrt) {
#pragma omp simd
	for (long i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1 - b1) * g[i];
		v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
		p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) / bc2sqrt + eps);
	}
}
