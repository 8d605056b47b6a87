package tracer

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkTracerVsMinimal traces a loop that builds a 30,000-element list
// (60,000 events) with ndb's exact recorder and, in the same benchmark, runs
// a minimal sys.settrace recorder that stores only (event, lineno) on the
// same interpreter. Reported:
//   - ndb-events/s: end to end through Trace (fork, IPC, Go decoding included)
//     against the minimal recorder's rate timed inside Python (start-up
//     excluded): "ratio" (target >= 0.1);
//   - the same with CPU time instead of wall time (the traced child's CPU
//     against the recorder's process time): "cpu-ratio", steadier on a
//     shared machine.
func BenchmarkTracerVsMinimal(b *testing.B) {
	tr := sharedTracer(b)
	path := filepath.Join("testdata", "bench_loop.py")
	src, err := ReadSource(path)
	if err != nil {
		b.Fatal(err)
	}
	var ndbEvents, minEvents int
	var ndbWall, ndbCPU, minWall, minCPU, childWall float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := tr.Trace(context.Background(), Program{Source: src})
		if err != nil || res.Exit.Kind != ExitNormal {
			b.Fatalf("trace: %v %+v", err, res.Exit)
		}
		ndbWall += time.Since(start).Seconds()
		ndbCPU += tr.last.CPU
		childWall += tr.last.Elapsed
		ndbEvents += len(res.States)

		b.StopTimer()
		n, wall, cpu := runMinimal(b, tr.Info().Executable, path)
		minEvents += n
		minWall += wall
		minCPU += cpu
		b.StartTimer()
	}
	ndbRate := float64(ndbEvents) / ndbWall
	minRate := float64(minEvents) / minWall
	b.ReportMetric(ndbRate, "ndb-events/s")
	b.ReportMetric(minRate, "minimal-events/s")
	b.ReportMetric(ndbRate/minRate, "ratio")
	b.ReportMetric((float64(ndbEvents)/ndbCPU)/(float64(minEvents)/minCPU), "cpu-ratio")
	b.ReportMetric(childWall/float64(b.N)*1000, "child-wall-ms")
	b.ReportMetric(ndbCPU/float64(b.N)*1000, "child-cpu-ms")
}

func runMinimal(b *testing.B, python, path string) (n int, wall, cpu float64) {
	out, err := exec.Command(python, "-s", filepath.Join("testdata", "minimal_recorder.py"), path).Output()
	if err != nil {
		b.Fatalf("minimal recorder: %v", err)
	}
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &n, &wall, &cpu); err != nil {
		b.Fatalf("minimal recorder output %q", out)
	}
	return n, wall, cpu
}

// BenchmarkShortCalls measures programs per second on one worker for the data
// pipeline's shape: a short function traced by one call (15 states).
func BenchmarkShortCalls(b *testing.B) {
	tr := sharedTracer(b)
	p := Program{Source: "def f(s, n):\n    out = []\n    for c in s:\n        out.append(c * n)\n    return ''.join(out)\n", Call: "f('abc', 2)"}
	var cpu float64
	tree0 := treeCPU(tr.cmd.Process.Pid)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := tr.Trace(context.Background(), p)
		if err != nil || res.Exit.Kind != ExitNormal {
			b.Fatalf("trace: %v %+v", err, res.Exit)
		}
		cpu += tr.last.CPU
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
	b.ReportMetric(cpu/float64(b.N)*1000, "child-cpu-ms/program")
	// all the CPU the worker side spent (worker, bwrap, every program's
	// process and its set-up), steadier than programs/s on a shared machine
	b.ReportMetric((treeCPU(tr.cmd.Process.Pid)-tree0)/float64(b.N)*1000, "tree-cpu-ms/program")
}

// BenchmarkShortCallsTwoWorkers is BenchmarkShortCalls on two Tracers at
// once, the data pipeline's set-up.
func BenchmarkShortCallsTwoWorkers(b *testing.B) {
	workers := []*Tracer{sharedTracer(b)}
	second, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer second.Close()
	workers = append(workers, second)
	p := Program{Source: "def f(s, n):\n    out = []\n    for c in s:\n        out.append(c * n)\n    return ''.join(out)\n", Call: "f('abc', 2)"}
	b.ResetTimer()
	jobs := make(chan int)
	errs := make(chan error, len(workers))
	for _, w := range workers {
		go func(w *Tracer) {
			for range jobs {
				res, err := w.Trace(context.Background(), p)
				if err == nil && res.Exit.Kind != ExitNormal {
					err = fmt.Errorf("exit %+v", res.Exit)
				}
				if err != nil {
					errs <- err
					for range jobs {
					}
					return
				}
			}
			errs <- nil
		}(w)
	}
	for i := 0; i < b.N; i++ {
		jobs <- i
	}
	close(jobs)
	for range workers {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
}

// BenchmarkLive compares, on testdata/bench_loop.py, a live run let go to
// its end without a pause (a continue without breakpoints) with a whole
// run of the same program (ratio: live events/s over whole-run events/s),
// and measures how many stops per second stepping makes (one pause and one
// resume per event: the cost of pdb's s on a live run).
func BenchmarkLive(b *testing.B) {
	tr := sharedTracer(b)
	src, err := ReadSource(filepath.Join("testdata", "bench_loop.py"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var liveWall, wholeWall, stepWall float64
	var events, steps int
	for i := 0; i < b.N; i++ {
		start := time.Now()
		whole, err := tr.Trace(ctx, Program{Source: src})
		if err != nil || whole.Exit.Kind != ExitNormal {
			b.Fatalf("trace: %v %+v", err, whole.Exit)
		}
		wholeWall += time.Since(start).Seconds()

		start = time.Now()
		r, err := tr.Start(ctx, Program{Source: src}, Limits{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Resume(ctx, Pause{Depth: -1}); err != nil || !r.Ended() || len(r.Trace().States) != len(whole.States) {
			b.Fatalf("live run: %v ended %v, %d states", err, r.Ended(), len(r.Trace().States))
		}
		liveWall += time.Since(start).Seconds()
		events += len(whole.States)
		r.Close()

		r, err = tr.Start(ctx, Program{Source: src}, Limits{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for range 2000 {
			if err := r.Resume(ctx, PauseAll); err != nil {
				b.Fatal(err)
			}
		}
		stepWall += time.Since(start).Seconds()
		steps += 2000
		r.Close()
	}
	b.ReportMetric(float64(events)/liveWall, "live-events/s")
	b.ReportMetric(wholeWall/liveWall, "live/whole")
	b.ReportMetric(float64(steps)/stepWall, "steps/s")
}
