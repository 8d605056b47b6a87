package tracer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Programs that write their own records into their record pipe (issue 30,
// item 2): every length and count the decoder reads is checked before it
// allocates; a bad record ends that program's run with a clear reason and
// the same worker runs the next program exactly.

// forgeRecords is a program fragment: send(records) writes one chunk of
// records into the program's own record pipe, as the tracer does.
const forgeRecords = `import os, marshal, struct, stat, fcntl
def _pipe():
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            pass
_fd = _pipe()
def send(recs):
    data = marshal.dumps(recs, 2)
    data = struct.pack('<I', len(data)) + data
    while data:
        data = data[os.write(_fd, data):]
x = 1
`

func TestSandboxHostileRecords(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: the tests of hostile programs run sandboxed")
	}
	tr := sharedTracer(t)
	for _, c := range []struct {
		name   string
		send   string // Python: what the program sends after forgeRecords
		lim    Limits
		reason string // Exit.Reason
		errHas string // in Exit.Error
		maxMB  uint64 // bound on what Go allocates for the run
	}{
		// 20 MB of stdout reached the trace (MaxOutput is 1 MiB).
		{"output", `send([("o", "x" * 20_000_000, False)])`, Limits{}, "ndb: bad record", "output of 20000000 bytes", 80},
		{"output twice", `send([("o", "a", False)])`, Limits{}, "ndb: bad record", "a second output record", 0},
		{"streamed output", `send([("w", "y" * 600_000)]); send([("w", "y" * 600_000)])`, Limits{}, "ndb: bad record", "MaxOutput", 0},
		// Millions of empty local names: 435 MB under a 32 MiB trace.
		{"names", `send([(0, 1, 999999, 0, None, [""] * 5_000_000, "f", 0)])`, Limits{MaxTraceBytes: 32 << 20}, "trace size", "MaxTraceBytes", 100},
		{"names in a huge chunk", `send([(0, 1, 999999, 0, None, [""] * 10_000_000, "f", 0)])`, Limits{MaxTraceBytes: 32 << 20}, "trace size", "record chunk of", 40},
		{"changes", `send([(0, 1, 999999, 0, [0, "1"] * 3_000_000, ["a"], "f", 0)])`, Limits{MaxTraceBytes: 32 << 20}, "ndb: bad record", "locals changed of", 100},
		// A negative depth made ndb trace's readable view panic.
		{"negative depth", `send([(0, 1, 999999, -1, None, ["a"], "f", 0)])`, Limits{}, "ndb: bad record", "bad depth -1", 0},
		{"deep depth", `send([(0, 1, 999999, 1 << 40, None, ["a"], "f", 0)])`, Limits{}, "ndb: bad record", "bad depth", 0},
		{"line number", `send([(0, -5, 999999, 0, None, ["a"], "f", 0)])`, Limits{}, "ndb: bad record", "bad line number -5", 0},
		{"frame number", `send([(0, 1, -3, 0, None, ["a"], "f", 0)])`, Limits{}, "ndb: bad record", "bad frame number", 0},
		{"huge int", `send([(0, 1 << 100000, 1, 0, None, ["a"], "f", 0)])`, Limits{}, "ndb: bad record", "out of range", 0},
		{"repr", `send([(0, 1, 999999, 0, [0, "r" * 5000], ["a"], "f", 0)])`, Limits{}, "ndb: bad record", "a repr of 5000", 0},
		{"events", `send([(0, 1, 999999, 0, None, ["a"], "f", 0)] + [(1, 2, 999999, 0, None)] * 500)`, Limits{MaxEvents: 100}, "ndb: bad record", "more states than MaxEvents (100)", 0},
		{"evaluation text", `send([("r", True, "e" * 2_000_000, None)])`, Limits{}, "ndb: bad record", "an evaluation's text", 0},
		{"traceback", `send([("t", "t" * 2_000_000)])`, Limits{}, "ndb: bad record", "a traceback", 0},
		{"exit reason", `send([("x", "normal", "", "z" * 100_000, 0)])`, Limits{}, "ndb: bad record", "an exit's reason", 0},
		{"pause reason", `send([("p", "whatever")])`, Limits{}, "ndb: bad record", "unknown pause reason", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			lim := c.lim
			lim.Timeout = 30 * time.Second
			start := time.Now()
			res, err := tr.TraceLimits(context.Background(), Program{Source: forgeRecords + c.send + "\nprint('sent')\n"}, lim)
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
			t.Logf("%v, %d MB allocated: exit %+v", time.Since(start).Round(time.Millisecond), alloc, res.Exit)
			if res.Exit.Reason != c.reason || !strings.Contains(res.Exit.Error, c.errHas) {
				t.Errorf("exit %+v, want reason %q and %q in the error", res.Exit, c.reason, c.errHas)
			}
			if max := c.maxMB; max == 0 && alloc > 64 || max > 0 && alloc > max {
				t.Errorf("ndb allocated %d MB for the run", alloc)
			}
			if n := utf8.RuneCountInString(res.Stdout); n > DefaultLimits().MaxOutput+len(OutputCutMarker) {
				t.Errorf("stdout of %d characters", n)
			}
			var b bytes.Buffer
			if err := WriteText(&b, res); err != nil {
				t.Fatal(err)
			}
			for _, s := range res.States {
				if s.Depth < 0 || s.Lineno < 0 || len(s.Arg) > 4*(DefaultLimits().ReprLimit+3) {
					t.Errorf("kept a bad state %+v", s)
				}
			}
			healthy(t, tr)
		})
	}
}

// TestWriteTextBadDepth: a state with a negative depth (a trace read back
// from JSON) is shown, not a panic.
func TestWriteTextBadDepth(t *testing.T) {
	tr := &Trace{States: []State{{Event: EventCall, Lineno: 1, Function: "f", Depth: -3, Frame: 1}}, Exit: Exit{Kind: ExitNormal}}
	var b bytes.Buffer
	if err := WriteText(&b, tr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "[depth -3] call") {
		t.Errorf("view %q", b.String())
	}
}

// TestSandboxHostileMemory: with the default limits, a program that sends
// the costliest records it can (every state with fresh 1,000-character
// reprs, up to MaxEvents states) keeps ndb's memory under 300 MB: the
// trace stops at MaxTraceBytes. Peak resident memory of this test process
// (VmHWM), so run alone for the figure in docs/tracer.md:
//
//	go test ./tracer -run TestSandboxHostileMemory -v
func TestSandboxHostileMemory(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: the tests of hostile programs run sandboxed")
	}
	tr := sharedTracer(t)
	for _, c := range []struct{ name, send string }{
		{"fresh reprs", `s = "a" * 1000
send([(0, 1, 999999, 0, None, ["a", "b", "c"], "f", 0)])
for i in range(100):
    send([(1, 2, 999999, 0, [0, s, 1, s, 2, s])] * 1000)`},
		{"many locals", `send([(0, 1, 999999, 0, None, list(map("v{}".format, range(200000))), "f", 0)])
for i in range(100):
    send([(1, 2, 999999, 0, [i, "x"])] * 10)`},
		{"big chunks", `for i in range(20):
    send([("w", "")] * 6_000_000)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res, err := tr.TraceLimits(context.Background(), Program{Source: forgeRecords + c.send + "\n"}, Limits{Timeout: 60 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			hwm := peakRSS(t)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			t.Logf("heap in use %d MB, heap sys %d MB, sys %d MB, %d GCs", ms.HeapInuse>>20, ms.HeapSys>>20, ms.Sys>>20, ms.NumGC)
			t.Logf("%v: %d states, exit %+v; peak RSS of this process %d MB", time.Since(start).Round(time.Millisecond), len(res.States), res.Exit, hwm>>20)
			if hwm > 300<<20 {
				t.Errorf("peak RSS %d MB", hwm>>20)
			}
			res = nil
			healthy(t, tr)
		})
	}
}

// peakRSS is this process's peak resident memory (VmHWM), bytes.
func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			var kb int64
			fmt.Sscan(f[1], &kb)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// TestWriteTextEscapes: the readable view (ndb trace) escapes control
// characters in every field a program controls (issue 30, item 3).
func TestWriteTextEscapes(t *testing.T) {
	tr := &Trace{States: []State{
		{Event: EventCall, Lineno: 1, Function: "f\x1b[1m", Src: "def f():", Frame: 1, Locals: Locals{{"k\x1b[2J", "<\x1b]0;title\x07>"}}},
		{Event: EventReturn, Lineno: 1, Function: "f\x1b[1m", Src: "def f():", Frame: 1, Arg: "\u009b31m\r"},
	}, Exit: Exit{Kind: ExitError, Error: "E('\x1b[5m')"}, Stdout: "out\x1b[3m\nline\ttab\n"}
	var b bytes.Buffer
	if err := WriteText(&b, tr); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if strings.ContainsAny(got, "\x1b\x07\r\u009b") {
		t.Errorf("raw control characters in %q", got)
	}
	for _, want := range []string{`f\x1b[1m:1`, `k\x1b[2J=<\x1b]0;title\x07>`, `-> \x9b31m\r`, `E('\x1b[5m')`, "out\\x1b[3m\nline\ttab\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("view %q lacks %q", got, want)
		}
	}
}
