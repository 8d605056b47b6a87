package tracer

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each hostile program must end in a clear Exit, quickly, and leave the
// shared worker able to trace the next program (checked after every case).
// The programs bound themselves even if a guard failed: the memory bomb stops
// near 2 GiB, the fork bomb forks at most 50 times, the network test only
// dials a listener this test opened on 127.0.0.1.

func assertHealthy(t *testing.T) {
	t.Helper()
	tr := trace(t, Program{Source: "def f(x):\n    return x + 1\n", Call: "f(1)"}, Limits{})
	if tr.Exit.Kind != ExitNormal || tr.States[len(tr.States)-1].Arg != "2" {
		t.Fatalf("worker unhealthy after the hostile program: %+v", tr.Exit)
	}
}

func timed(t *testing.T, p Program, lim Limits, max time.Duration) *Trace {
	t.Helper()
	start := time.Now()
	tr := trace(t, p, lim)
	if d := time.Since(start); d > max {
		t.Errorf("took %v, want under %v", d, max)
	}
	t.Cleanup(func() { assertHealthy(t) })
	return tr
}

func wantExit(t *testing.T, tr *Trace, kind, reason, errPrefix string) {
	t.Helper()
	e := tr.Exit
	if e.Kind != kind || (reason != "" && e.Reason != reason) || !strings.HasPrefix(e.Error, errPrefix) {
		t.Errorf("exit %+v, want kind %q reason %q error %q...", e, kind, reason, errPrefix)
	}
}

func TestSafetySyntaxError(t *testing.T) {
	tr := timed(t, Program{Source: "def f(:\n    pass\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "syntax error", "SyntaxError(")
	if len(tr.States) != 0 {
		t.Errorf("states of a program that does not compile: %d", len(tr.States))
	}
	tr = timed(t, Program{Source: "x = 1\x00\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "syntax error", "")
}

func TestSafetyInfiniteLoopEvents(t *testing.T) {
	tr := timed(t, Program{Source: "i = 0\nwhile True:\n    i += 1\n"}, Limits{MaxEvents: 1000}, 5*time.Second)
	wantExit(t, tr, ExitNever, "events", "")
	if len(tr.States) != 1000 {
		t.Errorf("%d states, want exactly the 1000 allowed", len(tr.States))
	}
}

func TestSafetyInfiniteLoopNoEvents(t *testing.T) {
	// A loop inside C code fires no trace events: only the wall clock stops it.
	tr := timed(t, Program{Source: "import itertools\nsum(itertools.count())\n"}, Limits{Timeout: time.Second}, 5*time.Second)
	wantExit(t, tr, ExitNever, "timeout", "")
	if len(tr.States) < 2 {
		t.Errorf("the states before the loop were lost: %d", len(tr.States))
	}
}

func TestSafetyMemoryBomb(t *testing.T) {
	// 20 x 100 MiB: stops near 2 GiB even without the 256 MiB limit.
	src := "xs = []\nfor i in range(20):\n    xs.append(bytearray(100 * 1024 * 1024))\n"
	tr := timed(t, Program{Source: src}, Limits{MemoryBytes: 256 << 20}, 10*time.Second)
	wantExit(t, tr, ExitNever, "memory", "MemoryError")
}

func TestSafetyForkBomb(t *testing.T) {
	src := "import os\nfor i in range(50):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
	tr := timed(t, Program{Source: src}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "", "PermissionError(")
}

func TestSafetyOsExit(t *testing.T) {
	tr := timed(t, Program{Source: "import os\nx = 1\nos._exit(3)\ny = 2\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "os._exit", "os._exit(3)")
	if tr.Exit.Code != 3 {
		t.Errorf("code %d, want 3", tr.Exit.Code)
	}
	if n := len(tr.States); n != 4 || tr.States[n-1].Lineno != 3 {
		t.Errorf("states before os._exit: %+v", steps(tr))
	}
}

func TestSafetySysExit(t *testing.T) {
	tr := timed(t, Program{Source: "import sys\nsys.exit(2)\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "sys.exit", "SystemExit(2)")
	if tr.Exit.Code != 2 {
		t.Errorf("code %d, want 2", tr.Exit.Code)
	}
	tr = timed(t, Program{Source: "import sys\nsys.exit(0)\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitNormal, "sys.exit", "")
}

func TestSafetyDeepRecursion(t *testing.T) {
	src := "import sys\nsys.setrecursionlimit(200000)\ndef r(n):\n    return 0 if n == 0 else 1 + r(n - 1)\nx = r(100000)\n"
	tr := timed(t, Program{Source: src}, Limits{MaxEvents: 400000, Timeout: 30 * time.Second}, 40*time.Second)
	// It completes (the usual case), or the interpreter dies of stack overflow,
	// or a very slow machine hits the timeout: all are clear ends.
	if tr.Exit.Kind == ExitNormal {
		max := 0
		for _, s := range tr.States {
			if s.Depth > max {
				max = s.Depth
			}
		}
		if max != 100001 {
			t.Errorf("max depth %d, want 100001", max)
		}
	} else if tr.Exit.Kind != ExitError && tr.Exit != (Exit{Kind: ExitNever, Reason: "timeout"}) {
		t.Errorf("exit %+v", tr.Exit)
	}
	tr = timed(t, Program{Source: "def r(n):\n    return r(n + 1)\nr(0)\n"}, Limits{}, 10*time.Second)
	wantExit(t, tr, ExitError, "", "RecursionError(")
}

func TestSafetyBadRepr(t *testing.T) {
	src := `import time
class Raises:
    def __repr__(self):
        raise ValueError("no")
class Huge:
    def __repr__(self):
        return "h" * (1 << 20)
class Sleeps:
    def __repr__(self):
        time.sleep(30)
        return "late"
class NotStr:
    def __repr__(self):
        return 42
a = Raises()
b = Huge()
c = Sleeps()
d = NotStr()
pass
`
	tr := timed(t, Program{Source: src}, Limits{ReprLimit: 100}, 8*time.Second)
	wantExit(t, tr, ExitNormal, "", "")
	l := tr.States[len(tr.States)-2].Locals
	want := map[string]string{"a": "<repr raised ValueError>", "b": strings.Repeat("h", 100) + CutMarker,
		"c": ReprTimedOut, "d": "<repr raised TypeError>"}
	for k, v := range want {
		if got, _ := l.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestSafetyNonUTF8Source(t *testing.T) {
	tr := timed(t, Program{Source: "x = '\xe9'\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "syntax error", "SyntaxError(")
	if _, err := DecodeSource([]byte("x = '\xe9'\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("DecodeSource error %v", err)
	}
	s, err := DecodeSource([]byte("# -*- coding: latin-1 -*-\nx = '\xe9'\n"))
	if err != nil || !strings.Contains(s, "é") {
		t.Errorf("latin-1 source: %q %v", s, err)
	}
	if _, err := DecodeSource([]byte("# coding: cp1252\nx = 1\n")); err == nil {
		t.Error("unsupported encoding accepted")
	}
}

func TestSafetyHugeOutput(t *testing.T) {
	src := "for i in range(100):\n    print('x' * (1024 * 1024))\n"
	tr := timed(t, Program{Source: src}, Limits{}, 10*time.Second)
	wantExit(t, tr, ExitNormal, "", "")
	if !strings.HasSuffix(tr.Stdout, "[ndb: output cut]") || len(tr.Stdout) > DefaultLimits().MaxOutput+100 {
		t.Errorf("stdout of %d bytes, want it cut near %d", len(tr.Stdout), DefaultLimits().MaxOutput)
	}
}

func TestSafetyStdin(t *testing.T) {
	tr := timed(t, Program{Source: "x = input()\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "", "EOFError(")
	tr = timed(t, Program{Source: "import sys\ndata = sys.stdin.read()\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitNormal, "", "")
}

func TestSafetyThreads(t *testing.T) {
	src := `import threading, time
def work():
    global done
    done = sum(range(10))
def forever():
    while True:
        time.sleep(0.01)
threading.Thread(target=forever, daemon=True).start()
threading.Thread(target=forever).start()
t = threading.Thread(target=work)
t.start()
t.join()
print(done)
`
	tr := timed(t, Program{Source: src}, Limits{Timeout: 5 * time.Second}, 5*time.Second)
	wantExit(t, tr, ExitNormal, "", "")
	if tr.Stdout != "45\n" {
		t.Errorf("stdout %q", tr.Stdout)
	}
	for _, s := range tr.States {
		if s.Function == "work" || s.Function == "forever" {
			t.Fatalf("a thread's frame was traced: %+v", s)
		}
	}
}

func TestSafetyNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	accepted := make(chan bool, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
			accepted <- true
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	src := fmt.Sprintf("import socket\ns = socket.create_connection(('127.0.0.1', %d), timeout=2)\ns.sendall(b'hi')\n", port)
	tr := timed(t, Program{Source: src}, Limits{}, 5*time.Second)
	if tr.Exit.Kind != ExitError {
		t.Errorf("exit %+v, want an error", tr.Exit)
	}
	select {
	case <-accepted:
		t.Fatal("the traced program reached the test's listener")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestSafetyWriteOutsideScratch(t *testing.T) {
	target := filepath.Join(t.TempDir(), "outside.txt")
	src := fmt.Sprintf("with open(%q, 'w') as f:\n    f.write('x')\n", target)
	tr := timed(t, Program{Source: src}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "", "PermissionError(")
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the traced program wrote outside its scratch directory")
	}
	// Inside the scratch directory (the working directory) writing works.
	tr = timed(t, Program{Source: "with open('ok.txt', 'w') as f:\n    f.write('x')\nprint(open('ok.txt').read())\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitNormal, "", "")
	if tr.Stdout != "x\n" {
		t.Errorf("stdout %q", tr.Stdout)
	}
	tr = timed(t, Program{Source: "import os\nos.remove('/etc/hostname')\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "", "PermissionError(")
}

func TestSafetyKillWorker(t *testing.T) {
	// The program cannot signal its parent, the worker.
	tr := timed(t, Program{Source: "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"}, Limits{}, 5*time.Second)
	wantExit(t, tr, ExitError, "", "PermissionError(")
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sharedTracer(t).Trace(ctx, Program{Source: "x = 1\n"}); err == nil {
		// A run may finish before the watchdog sees the cancel; that is fine too.
		t.Log("finished before the cancel was noticed")
	}
	assertHealthy(t)
}

func TestSafetyClosedStream(t *testing.T) {
	// The program closes every descriptor it did not open (the tracer's stream
	// among them) and keeps running: the run ends at once, clearly.
	src := "import os, time\nfor fd in range(3, 64):\n    try:\n        os.close(fd)\n    except OSError:\n        pass\ntime.sleep(30)\n"
	tr := timed(t, Program{Source: src}, Limits{Timeout: 20 * time.Second}, 10*time.Second)
	if tr.Exit.Kind != ExitError || !strings.Contains(tr.Exit.Reason, "closed the tracer's stream") {
		t.Errorf("exit %+v", tr.Exit)
	}
}

func TestSafetyProgramStopsTracing(t *testing.T) {
	tr := timed(t, Program{Source: "import sys\nsys.settrace(None)\nx = 1\n"}, Limits{}, 5*time.Second)
	if tr.Exit.Kind != ExitNormal || !strings.HasPrefix(tr.Exit.Reason, "trace incomplete") {
		t.Errorf("exit %+v, want normal with reason trace incomplete", tr.Exit)
	}
}

func TestSafetyDiskBomb(t *testing.T) {
	// 30 files of 10 MiB: 300 MiB at most even if the scratch size guard fails.
	src := "for i in range(30):\n    with open('f%d' % i, 'wb') as f:\n        f.write(b'x' * (10 << 20))\n"
	tr := timed(t, Program{Source: src}, Limits{}, 20*time.Second)
	if !sharedTracer(t).Info().ScratchTmpfs {
		t.Skip("no private tmpfs for scratch directories here (needs root)")
	}
	wantExit(t, tr, ExitError, "", "OSError(28, 'No space left on device')")
}

func TestSafetySegfault(t *testing.T) {
	tr := timed(t, Program{Source: "import ctypes\nx = 1\nctypes.string_at(0)\n"}, Limits{}, 10*time.Second)
	wantExit(t, tr, ExitError, "signal", "killed by SIGSEGV")
	if len(tr.States) < 3 {
		t.Errorf("the states before the crash were lost: %d", len(tr.States))
	}
}
