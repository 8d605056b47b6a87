// Package synth generates synthetic Python functions in CruxEval's style,
// with argument tuples to call them on (issue 3, item 3(b)).
//
// A program is a function f of 1-3 parameters over str, int, list, dict and
// set values, sometimes with a helper function (possibly recursive) defined
// above it. Statements come from a small typed grammar (see docs/synth.md),
// so programs mostly run without error; the errors that remain are data too.
//
// Program number i of the stream seeded by seed is a pure function of
// (seed, i): no global state, so callers can shard and resume freely.
package synth

import (
	"fmt"
	"math/rand/v2"

	"ndb/tracer"
)

// Generate returns the synthetic function number i of the stream seeded by
// seed, with k calls of it (distinct inputs). Every Program shares Source and
// differs in Call; Path is "synth/<seed>/<i>".
//
// Fewer than k Programs come back only when the function's input space is too
// small to hold k distinct argument tuples (rare). The first k calls do not
// depend on k: Generate(s, i, 3) is a prefix of Generate(s, i, 5).
func Generate(seed int64, i int, k int) []tracer.Program {
	return DefaultKnobs.Generate(seed, i, k)
}

// Generate is the package-level Generate with these knobs.
func (kn Knobs) Generate(seed int64, i int, k int) []tracer.Program {
	p := kn.program(seed, i)
	calls := p.calls(seed, i, k)
	path := fmt.Sprintf("synth/%d/%d", seed, i)
	out := make([]tracer.Program, len(calls))
	for j, c := range calls {
		out[j] = tracer.Program{Path: path, Source: p.source, Call: c}
	}
	return out
}

// Knobs are the generator's tunable probabilities and sizes. The zero value
// is not useful; start from DefaultKnobs.
type Knobs struct {
	PHelper       float64 // a plain (non-recursive) helper function above f
	PRecHelper    float64 // a recursive helper above f
	PRecF         float64 // f itself is recursive (exclusive with the two above)
	PHelperRaises float64 // a plain helper raises ValueError under a condition
	PTry          float64 // f holds at least one try/except
	PLoop         float64 // f holds at least one for loop
	PWhile        float64 // f holds at least one while loop
	PRisky        float64 // weight scale of unguarded operations that may raise
	MinStmts      int     // statements in f's body, excluding forced ones and the final return
	MaxStmts      int
	MaxNest       int // deepest block nesting (if/for/while/try)
}

// DefaultKnobs are the knobs Generate uses; docs/synth.md lists the rates
// they produce.
var DefaultKnobs = Knobs{
	PHelper:       0.25,
	PRecHelper:    0.10,
	PRecF:         0.06,
	PHelperRaises: 0.35,
	PTry:          0.25,
	PLoop:         0.55,
	PWhile:        0.12,
	PRisky:        0.5,
	MinStmts:      2,
	MaxStmts:      6,
	MaxNest:       3,
}

// Features records which constructs a generated program contains (static).
type Features struct {
	Helper, RecHelper, RecF    bool
	For, While, If, Try, Raise bool
	Comprehension, EarlyReturn bool
	Slice, BreakContinue       bool
	Params                     int
	ExceptLines                []int // 1-based lines of every except clause's first body line
	RecursiveFuncs             []string
}

// program is one generated function with what the input generator needs.
type program struct {
	source     string
	params     []variable
	recCounter int      // index of a recursion-counter parameter (inputs keep it small), or -1
	strLits    []string // string literals the program uses: inputs reuse them so lookups hit sometimes
	intLits    []int
	features   Features
}

// newRand derives an independent stream for (seed, i, stream) by splitmix64
// mixing, so nearby seeds and indices give unrelated programs.
func newRand(seed int64, i int, stream uint64) *rand.Rand {
	a := splitmix(uint64(seed) ^ 0x5eed5eed5eed5eed)
	b := splitmix(a ^ splitmix(uint64(i)+0x9e3779b97f4a7c15) ^ stream*0xbf58476d1ce4e5b9)
	return rand.New(rand.NewPCG(a, b))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Inspect returns the static features of program i of the stream seeded by
// seed (for dataset statistics). ExceptLines are 1-based lines of Source.
func Inspect(seed int64, i int) Features {
	return DefaultKnobs.program(seed, i).features
}
