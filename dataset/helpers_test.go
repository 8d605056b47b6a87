package dataset

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"ndb/tracer"
)

// newRealTracer starts the real tracer, or skips when no Python is found.
func newRealTracer(t testing.TB) *tracer.Tracer {
	t.Helper()
	tr, err := tracer.New(tracer.Options{})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// traceFileUnits loads a file source (TheAlgorithms' or realworld's layout)
// from a fixture folder, traces every unit with gen's limits and calls each
// with the unit, its trace and the source's verdict ("" = kept).
func traceFileUnits(t *testing.T, source, dir string, each func(it Item, res *tracer.Trace, drop string)) {
	t.Helper()
	s, err := loadFiles(source, source, dir, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	python, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	tr, err := tracer.New(tracer.Options{Python: python, Limits: tracer.Limits{Timeout: 5 * time.Second, MaxEvents: 2000}})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	defer tr.Close()
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		res, err := tr.Trace(context.Background(), it.Program)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		each(it, res, s.DropTrace(it, res))
	}
}
