package eval

import (
	"fmt"

	"ndb/dataset"
	"ndb/model/train"
	"ndb/tracer"
)

// The programs a measurement runs on: held-out items of a data source
// (never seen in training) and the sets of them per source.

// NamedProgram is a held-out program with a stable id.
type NamedProgram struct {
	ID      string
	Program tracer.Program
}

// HeldOut keeps the items of src that training never saw: those whose
// program id falls in the validation split of docs/training.md
// (train.ProgramHash(id) % 100 < valPercent), so every input of a held-out
// function is held out too. Items the source skips are left out.
//
// An unbounded source (synthetic) is scanned from item 0 for its held-out
// items, up to limit of them (UnboundedHeldOut when limit is 0): with the
// training's seed these are exactly the programs its split kept out, with
// another seed they are fresh programs anyway.
func HeldOut(src dataset.Source, valPercent int, limit int) ([]NamedProgram, error) {
	n := src.Len()
	if n < 0 {
		if limit <= 0 {
			limit = UnboundedHeldOut
		}
		if valPercent <= 0 {
			return nil, fmt.Errorf("eval: source %s has no held-out program at %d%%", src.Name(), valPercent)
		}
		n = 1000 * limit // bound the scan (valPercent >= 1 needs about 100*limit items)
	}
	var out []NamedProgram
	for i := 0; i < n; i++ {
		it, skip := src.Item(i)
		if skip != "" {
			continue
		}
		if train.ProgramHash(it.ID)%100 < uint64(valPercent) {
			out = append(out, NamedProgram{ID: it.ID, Program: it.Program})
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("eval: source %s has no held-out program at %d%%", src.Name(), valPercent)
	}
	return out, nil
}

// UnboundedHeldOut is how many held-out programs HeldOut takes from an
// unbounded source (synthetic) when no limit is given.
const UnboundedHeldOut = 400

// SourcePrograms are the held-out programs of one source.
type SourcePrograms struct {
	Source   string
	Programs []NamedProgram
	Filter   dataset.TraceFilter // the source's trace rule, if it has one (NextStateOptions.TraceFilter)
}
