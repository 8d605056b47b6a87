//go:build cgo && !purego && amd64

package nn

/*
#cgo CFLAGS: -O3
#include <stdint.h>

// Twelve independent FMA chains on 512-bit (or 256-bit) registers: enough
// to fill both FMA ports despite their 4-cycle latency. Each iteration is
// 12 FMAs of 16 (or 8) floats = 384 (or 192) flops.
#define F12(R) \
 "vfmadd231ps %%" R "12, %%" R "13, %%" R "0\n" "vfmadd231ps %%" R "12, %%" R "13, %%" R "1\n" \
 "vfmadd231ps %%" R "12, %%" R "13, %%" R "2\n" "vfmadd231ps %%" R "12, %%" R "13, %%" R "3\n" \
 "vfmadd231ps %%" R "12, %%" R "13, %%" R "4\n" "vfmadd231ps %%" R "12, %%" R "13, %%" R "5\n" \
 "vfmadd231ps %%" R "12, %%" R "13, %%" R "6\n" "vfmadd231ps %%" R "12, %%" R "13, %%" R "7\n" \
 "vfmadd231ps %%" R "12, %%" R "13, %%" R "8\n" "vfmadd231ps %%" R "12, %%" R "13, %%" R "9\n" \
 "vfmadd231ps %%" R "12, %%" R "13, %%" R "10\n" "vfmadd231ps %%" R "12, %%" R "13, %%" R "11\n"
#define CLOBBER "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","cc"

static void fma512(int64_t n) {
	__asm__ volatile("vxorps %%xmm12,%%xmm12,%%xmm12\n vxorps %%xmm13,%%xmm13,%%xmm13\n1:\n" F12("zmm") "dec %0\n jnz 1b\n vzeroupper\n" : "+r"(n) :: CLOBBER);
}
static void fma256(int64_t n) {
	__asm__ volatile("vxorps %%xmm12,%%xmm12,%%xmm12\n vxorps %%xmm13,%%xmm13,%%xmm13\n1:\n" F12("ymm") "dec %0\n jnz 1b\n vzeroupper\n" : "+r"(n) :: CLOBBER);
}
static int has_avx512f(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f"); }
static int has_fma(void) { __builtin_cpu_init(); return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2"); }
#include <time.h>
// fma_loop runs n iterations and returns the CPU seconds this thread spent.
static double fma_loop(int wide, int64_t n) {
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	if (wide) fma512(n); else fma256(n);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}
*/
import "C"

import (
	"errors"
	"runtime"
	"sync"
	"time"
)

// MeasurePeak measures this machine's fp32 FMA peak: a register-only FMA
// loop on every core at once (GOMAXPROCS goroutines, each on its own OS
// thread) for about d (best of three rounds), using AVX-512 when the CPU has
// it, else AVX2.
func MeasurePeak(d time.Duration) (Peak, error) {
	wide := C.has_avx512f() != 0
	pk := Peak{ISA: "avx2"}
	flopsPerIter := 12 * 8 * 2
	if wide {
		pk.ISA, flopsPerIter = "avx512", 12*16*2
	} else if C.has_fma() == 0 {
		return Peak{}, errors.New("nn: no AVX2/FMA: cannot measure the FMA peak")
	}
	w := C.int(0)
	if wide {
		w = 1
	}
	// calibrate: iterations per second of one core
	n := int64(1_000_000)
	for {
		t := time.Now()
		C.fma_loop(w, C.int64_t(n))
		if time.Since(t) > 20*time.Millisecond {
			n = int64(float64(n) * float64(d) / float64(time.Since(t)))
			break
		}
		n *= 4
	}
	// best of three rounds: the first often runs below the AVX-512 clock
	n /= 3
	p := runtime.GOMAXPROCS(0)
	flops := float64(n) * float64(flopsPerIter)
	for range 3 {
		var wg sync.WaitGroup
		cpu := make([]float64, p)
		start := time.Now()
		for i := range p {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu[i] = float64(C.fma_loop(w, C.int64_t(n)))
			}()
		}
		wg.Wait()
		pk.GFLOPS = max(pk.GFLOPS, float64(p)*flops/time.Since(start).Seconds()/1e9)
		for _, c := range cpu {
			pk.PerCoreGFLOPS = max(pk.PerCoreGFLOPS, flops/c/1e9)
		}
	}
	return pk, nil
}
