package debugger

import (
	"context"
	"sync"
	"testing"

	"ndb/tracer"
)

var (
	fixtureTracerOnce sync.Once
	fixtureTracer     *tracer.Tracer
	fixtureTracerErr  error
)

// traceFixture traces a fixture program with the real tracer (one worker
// shared by the package's tests; the worker is ended by the process exit).
func traceFixture(t testing.TB, python, src, call string) *tracer.Trace {
	t.Helper()
	fixtureTracerOnce.Do(func() {
		fixtureTracer, fixtureTracerErr = tracer.New(tracer.Options{Python: python})
	})
	if fixtureTracerErr != nil {
		t.Fatalf("tracer: %v", fixtureTracerErr)
	}
	tr, err := fixtureTracer.Trace(context.Background(), tracer.Program{Source: src, Call: call})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	return tr
}
