// Package eval measures a neural debugger the way SPEC section 6 says:
// next-state exact match per action and per field on held-out programs
// (forward and inverse, horizons, exact match@k), and CruxEval output and
// input prediction through debugger actions, scored by running
// assert f(INPUT) == OUTPUT in a sandboxed interpreter. Every engine
// (real, model, openai, cwm) can be measured; the real engine must score
// 100%, which is the harness's own check.
package eval

import (
	"ndb/format"
)

// Fields of a frame that exact match is reported for.
const (
	FieldEvt    = "em_evt"
	FieldSrc    = "em_src"
	FieldLocals = "em_locals"
	FieldArg    = "em_arg"
)

// Fields lists the per-field metrics in report order.
var Fields = []string{FieldEvt, FieldSrc, FieldLocals, FieldArg}

// Match is how a predicted frame compares with the true one: the whole
// frame, and each field the true frame has (a field the true frame lacks
// is absent from Fields: N/A, e.g. em_arg of a line or em_src of an exit).
type Match struct {
	Exact  bool
	Fields map[string]bool
}

// CompareFrames compares a prediction with the truth field by field. The
// event is the frame kind (inv_line and line are different events); the
// locals are the entries the frame shows, in order, with the elision
// marker; a prediction of another shape fails the fields it lacks.
func CompareFrames(pred, want format.Frame) Match {
	m := Match{Fields: map[string]bool{}}
	m.Fields[FieldEvt] = pred.Kind == want.Kind
	if !want.Kind.IsExit() {
		m.Fields[FieldSrc] = !pred.Kind.IsExit() && pred.Src == want.Src
		if want.Kind.HasLocals() {
			m.Fields[FieldLocals] = pred.Kind.HasLocals() && pred.Elided == want.Elided && sameLocals(pred, want)
		} else {
			m.Fields[FieldArg] = !pred.Kind.IsExit() && !pred.Kind.HasLocals() && pred.Arg == want.Arg
		}
	}
	m.Exact = pred.Kind.Valid() && format.FrameText(pred) == format.FrameText(want)
	return m
}

func sameLocals(a, b format.Frame) bool {
	if len(a.Locals) != len(b.Locals) {
		return false
	}
	for i := range a.Locals {
		if a.Locals[i] != b.Locals[i] {
			return false
		}
	}
	return true
}

// Score is an exact-match tally: the whole frame and each field, with the
// number of examples where the field applies.
type Score struct {
	N      int            `json:"n"`
	Exact  int            `json:"exact"`
	Hits   map[string]int `json:"hits"`   // field -> examples where it matched
	Counts map[string]int `json:"counts"` // field -> examples where it applies
	// exact match@k: examples where one of k samples was exact.
	KN    int `json:"k_n,omitempty"`
	KHits int `json:"k_hits,omitempty"`
}

// Add counts one comparison.
func (s *Score) Add(m Match) {
	if s.Hits == nil {
		s.Hits, s.Counts = map[string]int{}, map[string]int{}
	}
	s.N++
	if m.Exact {
		s.Exact++
	}
	for f, ok := range m.Fields {
		s.Counts[f]++
		if ok {
			s.Hits[f]++
		}
	}
}

// AddK counts one example scored with k samples.
func (s *Score) AddK(anyExact bool) {
	s.KN++
	if anyExact {
		s.KHits++
	}
}

// EM is the exact-match fraction (0 when empty).
func (s *Score) EM() float64 { return frac(s.Exact, s.N) }

// Field is the fraction for field f and whether it applies at all.
func (s *Score) Field(f string) (float64, bool) {
	n := s.Counts[f]
	return frac(s.Hits[f], n), n > 0
}

// EMAtK is exact match@k and whether it was measured.
func (s *Score) EMAtK() (float64, bool) { return frac(s.KHits, s.KN), s.KN > 0 }

// Merge adds o into s.
func (s *Score) Merge(o *Score) {
	if s.Hits == nil {
		s.Hits, s.Counts = map[string]int{}, map[string]int{}
	}
	s.N += o.N
	s.Exact += o.Exact
	s.KN += o.KN
	s.KHits += o.KHits
	for f, n := range o.Counts {
		s.Counts[f] += n
		s.Hits[f] += o.Hits[f]
	}
}

// Summary is the JSON form of a score: {"em", "n", field fractions, N/A
// fields left out, "em@k" when measured}.
func (s *Score) Summary() map[string]any {
	out := map[string]any{"em": s.EM(), "n": s.N}
	for _, f := range Fields {
		if v, ok := s.Field(f); ok {
			out[f] = v
		}
	}
	if v, ok := s.EMAtK(); ok {
		out["em@k"] = v
		out["k_n"] = s.KN
	}
	return out
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
