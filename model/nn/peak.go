package nn

// Peak is a measured fp32 FMA peak (see MeasurePeak).
type Peak struct {
	GFLOPS        float64 // all GOMAXPROCS cores together, by wall clock
	PerCoreGFLOPS float64 // one core, per second of its own CPU time (robust on a shared machine)
	ISA           string  // "avx512" or "avx2"
}
