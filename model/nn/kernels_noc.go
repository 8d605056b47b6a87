//go:build !cgo || purego || !amd64

package nn

// Without the C kernels there is one implementation: the Go one.
func kernelLevels() []int    { return []int{-1} }
func forceKernelLevel(l int) {}

// fusedISAFast: there are no fused attention kernels without C.
func fusedISAFast() bool { return false }
