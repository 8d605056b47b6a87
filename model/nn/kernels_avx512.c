//go:build cgo && !purego && amd64

// The network's elementwise kernels compiled for avx512.
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,prefer-vector-width=512")
#define KFN(name) name##_avx512
#define ATTN_ROWS 8 // 16 zmm accumulators
#define K_AVX512 1
#include "kernels_body.h"
