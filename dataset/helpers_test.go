package dataset

import (
	"encoding/json"
	"testing"

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
