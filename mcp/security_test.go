package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ndb/engine"
)

// secret is the text of files the tests must never see echoed.
const secret = "TOPSECRET-7f3a do not echo"

// TestReadProgramConfined: only regular files inside the roots, within the
// size cap, are read; no error carries the file's content.
func TestReadProgramConfined(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub")} {
		os.MkdirAll(d, 0o755)
	}
	write := func(p, s string) string {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write(filepath.Join(root, "sub", "ok.py"), "x = 1\n")
	secretFile := write(filepath.Join(outside, "secret.py"), secret+"\n")
	big := write(filepath.Join(root, "big.py"), strings.Repeat("x = 1\n", 300))
	os.Symlink(secretFile, filepath.Join(root, "link.py"))
	os.Symlink(outside, filepath.Join(root, "linkdir"))
	os.Symlink(good, filepath.Join(root, "inlink.py"))
	fifo := filepath.Join(root, "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		roots = []string{r}
	}
	cases := []struct {
		path  string
		roots []string
		want  string // "" = read; else the error's start after "program PATH: "
	}{
		{good, roots, ""},
		{filepath.Join(root, "inlink.py"), roots, ""},
		{filepath.Join(root, "sub", "..", "sub", "ok.py"), roots, ""},
		{secretFile, roots, "outside the workspace roots"},
		{filepath.Join(root, "..", "outside", "secret.py"), roots, "outside the workspace roots"},
		{filepath.Join(root, "link.py"), roots, "outside the workspace roots"},
		{filepath.Join(root, "linkdir", "secret.py"), roots, "outside the workspace roots"},
		{"/etc/shadow", roots, "outside the workspace roots"},
		{"/dev/zero", roots, "outside the workspace roots"},
		{"/dev/zero", []string{"/"}, "not a regular file"},
		{"/proc/self/environ", []string{"/"}, "more than the limit of 1024 bytes"}, // a size of 0 in stat: the read is bounded
		{fifo, roots, "not a regular file"},
		{root, roots, "not a regular file"},
		{filepath.Join(root, "nope.py"), roots, "no such file"},
		{big, roots, "1800 bytes, more than the limit of 1024"},
	}
	for _, c := range cases {
		real, src, err := readProgram(c.path, c.roots, 1024)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.path, err)
		case c.want == "" && (src != "x = 1\n" || !filepath.IsAbs(real)):
			t.Errorf("%s: %q at %q", c.path, src, real)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "program "+c.path+": "+c.want)):
			t.Errorf("%s: error %v, want %q", c.path, err, c.want)
		case err != nil && strings.Contains(err.Error(), "TOPSECRET"):
			t.Errorf("%s: the error echoes the file: %v", c.path, err)
		}
	}
}

// TestWorkspaceRoots: which folders a call may read from, with and without
// --root and the client's MCP roots; through debug_start, errors never
// echo a file outside them, and /dev/zero is refused at once.
func TestWorkspaceRoots(t *testing.T) {
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	os.MkdirAll(filepath.Join(a, "in"), 0o755)
	os.MkdirAll(b, 0o755)
	progA := filepath.Join(a, "in", "p.py")
	progB := filepath.Join(b, "p.py")
	os.WriteFile(progA, []byte("x = 1\n"), 0o644)
	os.WriteFile(progB, []byte(secret+"\n"), 0o644) // a syntax error whose text must not come back

	explicit, _ := NewWorkspace([]string{a})
	wide, _ := NewWorkspace([]string{base})
	cases := []struct {
		name   string
		ws     Workspace
		client []string // the client's roots (none: it offers no roots)
		ok     []string
		no     []string
	}{
		{"explicit", explicit, nil, []string{progA}, []string{progB, "/dev/zero", "/etc/passwd"}},
		{"explicit narrowed by the client", wide, []string{filepath.Join(a, "in")}, []string{progA}, []string{progB}},
		{"explicit with a client root beyond it", explicit, []string{base}, []string{progA}, []string{progB}},
		{"the client's roots replace the default", Workspace{Roots: []string{b}}, []string{a}, []string{progA}, []string{progB}},
		{"default", Workspace{Roots: []string{a}}, nil, []string{progA}, []string{progB}},
		{"a default of / is no workspace", Workspace{Roots: []string{"/"}}, nil, nil, []string{progA, "/dev/zero"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := NewServer(testRegistry(), "real")
			srv.SetWorkspace(c.ws)
			defer srv.Close()
			opts := &sdk.ClientSessionOptions{}
			client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil)
			if c.client != nil {
				opts.ProtocolVersion = "2025-11-25" // roots/list during a call: before 2026-07-28
				for _, r := range c.client {
					client.AddRoots(&sdk.Root{URI: "file://" + r})
				}
			}
			st, ct := sdk.NewInMemoryTransports()
			if _, err := srv.MCPServer().Connect(context.Background(), st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(context.Background(), ct, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, p := range c.ok {
				var st Stop
				mustCall(t, cs, ToolStart, map[string]any{"program": p}, &st)
				mustCall(t, cs, ToolEnd, map[string]any{"session": st.Session}, nil)
			}
			for _, p := range c.no {
				start := time.Now()
				text, isErr := call(t, cs, ToolStart, map[string]any{"program": p}, nil)
				if !isErr || strings.Contains(text, "TOPSECRET") || time.Since(start) > 5*time.Second {
					t.Errorf("%s: %q (error %v)", p, text, isErr)
				}
			}
		})
	}
}

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// children counts this process's child processes that are alive, or
// zombies it failed to wait for. With the test a subreaper, orphaned
// descendants are its children too; an orphan that already exited and
// had left our session (bwrap's own setsid child) is a zombie that init
// would reap, not a leak, and is not counted.
func children(t *testing.T) int {
	t.Helper()
	stat := func(pid string) (state, ppid, session string, ok bool) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return "", "", "", false
		}
		// pid (comm) state ppid pgrp session ...: comm may hold spaces
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 4 {
			return "", "", "", false
		}
		return f[0], f[1], f[3], true
	}
	me := strconv.Itoa(os.Getpid())
	_, _, mySession, ok := stat(me)
	ents, err := os.ReadDir("/proc")
	if err != nil || !ok {
		t.Skip("no /proc")
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, ppid, session, ok := stat(e.Name())
		if ok && ppid == me && (state != "Z" || session == mySession) {
			n++
		}
	}
	return n
}

// TestNoLeaksAfterManyCalls: a loop of MCP calls of every kind (sessions
// ended or left open, predictions on the real engine, refused programs,
// programs that fail) leaves no child process and no temporary folder once
// the sessions are ended or the server closes. NDB_MCP_CALLS sets the
// number of calls (default 60; docs/mcp.md has a run of 1,000).
func TestNoLeaksAfterManyCalls(t *testing.T) {
	n := 60
	if v, err := strconv.Atoi(os.Getenv("NDB_MCP_CALLS")); err == nil && v > 0 {
		n = v
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the workers' folders: counted here, apart from other tests'
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.py")
	os.WriteFile(prog, []byte("def f(n):\n    return n + 1\n\nprint(f(2))\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.py"), []byte("def (\n"), 0o644)
	reg := engine.NewRegistry(engine.Options{Workers: 1, Live: true})
	defer reg.Close()
	srv := NewServer(reg, "real")
	ws, _ := NewWorkspace([]string{dir})
	srv.SetWorkspace(ws)
	srv.SetMaxLive(4) // evictions too
	cs := connect(t, srv.MCPServer())

	// A subreaper: a descendant orphaned on the way (a worker whose
	// sandbox parent died) becomes our child, and is counted too.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e == 0 {
		defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)
	}
	before := children(t)
	calls, open := 0, ""
	step := func(tool string, args map[string]any) (string, bool) {
		calls++
		return call(t, cs, tool, args, nil)
	}
	started := time.Now()
	var spent [6]time.Duration // per kind of iteration, for docs/mcp.md
	for i := 0; calls < n; i++ {
		began := time.Now()
		switch i % 6 {
		case 0: // a session driven to its end and ended
			var st Stop
			calls++
			mustCall(t, cs, ToolStart, map[string]any{"program": prog, "breakpoints": []any{map[string]any{"line": 2}}}, &st)
			step(ToolEvaluate, map[string]any{"session": st.Session, "code": "n * 2"})
			step(ToolContinue, map[string]any{"session": st.Session})
			step(ToolEnd, map[string]any{"session": st.Session})
		case 1: // a session left open (closed by eviction or Close)
			var st Stop
			calls++
			mustCall(t, cs, ToolStart, map[string]any{"program": "x = 1\nwhile x < 3:\n    x += 1\n"}, &st)
			step(ToolStep, map[string]any{"session": st.Session, "mode": "over"})
			open = st.Session
		case 2:
			if text, isErr := step(ToolPredictOutput, map[string]any{"code": "def f(n):\n    return n * 2\n", "call": "f(21)", "engine": "real"}); isErr || text != "42" {
				t.Fatalf("predict_output: %q", text)
			}
		case 3: // errors of every kind
			step(ToolPredictOutput, map[string]any{"code": "def f(n):\n    return 1 / n\n", "call": "f(0)", "engine": "real"})
			step(ToolPredictOutput, map[string]any{"code": "def f(:\n", "call": "f(0)", "engine": "real"})
			step(ToolPredictInput, map[string]any{"code": "def f(n):\n    return n\n", "function": "f", "output": "1", "engine": "real"})
		case 4:
			step(ToolStart, map[string]any{"program": "/dev/zero"})
			step(ToolStart, map[string]any{"program": filepath.Join(dir, "bad.py")})
			step(ToolStart, map[string]any{"program": prog, "breakpoints": []any{map[string]any{"line": 99}}})
		case 5:
			step(ToolRestart, map[string]any{"session": open})
			step(ToolSessions, map[string]any{})
		}
		spent[i%6] += time.Since(began)
	}
	mid := children(t)
	srv.Close()
	reg.Close()
	took := time.Since(started)
	after := children(t)
	deadline := time.Now().Add(5 * time.Second)
	for after > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		after = children(t)
	}
	ents, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	t.Logf("%d calls in %v (by kind %v): %d child processes before, %d with sessions open, %d after; temporary folders left: %v", calls, took, spent, before, mid, after, left)
	if after > before || len(left) > 0 {
		t.Errorf("leaked: %d child processes (%d before), temporary folders %v", after, before, left)
	}
	if mid > before+4+1 {
		t.Errorf("%d child processes with at most 4 live sessions open", mid-before)
	}
}

// TestTextEscapesControls: a value holding a terminal escape reaches the
// text answer escaped (an agent may show it on a terminal) and the
// structured answer unchanged.
func TestTextEscapesControls(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "real").MCPServer())
	// repr() escapes controls in strings; a class's own __repr__ need not.
	src := "class A:\n    def __repr__(self):\n        return '\\x1b[2J\\x9b31m'\n\ndef f():\n    a = A()\n    return a\n"
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": src, "engine": "real", "call": "f()"}, &st)
	text := mustCall(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "out"}, &st)
	if st.Value != "\x1b[2J\u009b31m" {
		t.Fatalf("structured answer %+v", st)
	}
	if strings.ContainsAny(text, "\x1b\u009b") {
		t.Errorf("text answer holds raw control characters: %q", text)
	}
	if !strings.Contains(text, `\x1b[2J`) {
		t.Errorf("text answer lacks the escaped value: %q", text)
	}
}
