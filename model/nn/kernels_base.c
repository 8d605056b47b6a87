//go:build cgo && !purego && amd64

// The network's elementwise kernels compiled for baseline x86-64 (SSE2).
#define KFN(name) name##_base
#define ATTN_ROWS 1 // 8 xmm accumulators
#include "kernels_body.h"
