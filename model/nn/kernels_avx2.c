//go:build cgo && !purego && amd64

// The network's elementwise kernels compiled for avx2.
#pragma GCC target("avx2,fma")
#define KFN(name) name##_avx2
#define ATTN_ROWS 2 // 8 ymm accumulators
#define K_AVX2 1
#include "kernels_body.h"
