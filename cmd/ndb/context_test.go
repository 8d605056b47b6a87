package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ndb/tracer"
)

// fixture returns cmd/ndb/testdata/context/NAME (relative, as a user types it).
func ctxFixture(name string) string { return filepath.Join("testdata", "context", name) }

// TestTraceProgramContext: `ndb trace FILE -- ARGS` runs FILE as Python
// would, from its folder: a sibling import, a sibling data file, __file__,
// sys.argv, sys.path[0], --stdin, writes refused (or into a scratch copy
// with --writable), and a syntax error naming the file.
func TestTraceProgramContext(t *testing.T) {
	trace := traceCommand(t)
	defer resetFlags(trace)
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string // "" : exit 0
		want    []string
		notWant []string
	}{
		{"script", []string{ctxFixture("prog.py")}, "",
			[]string{"HELLO! from the data file | file prog.py True | argv [] | path0 context | stdin [] | write refused PermissionError", "exit normal"},
			[]string{"written x"}},
		{"args and stdin", []string{"--stdin", ctxFixture("input.txt"), ctxFixture("prog.py"), "--", "a", "-b", "--c"}, "",
			[]string{"argv ['a', '-b', '--c'] | path0 context | stdin ['first line', 'second line']"}, nil},
		{"writable", []string{"--writable", ctxFixture("prog.py")}, "",
			[]string{"written x", "HELLO! from the data file"}, []string{"write refused"}},
		{"json", []string{"--json", ctxFixture("prog.py"), "--", "x"}, "",
			[]string{`"exit":"normal"`, `argv ['x']`}, nil},
		{"syntax error", []string{ctxFixture("bad.py")}, ctxFixture("bad.py") + " does not compile",
			[]string{"exit error: SyntaxError('invalid syntax', ('" + mustAbs(t, ctxFixture("bad.py")) + "', 2"}, nil},
		{"call", []string{"--call", "double(4)", ctxFixture("funcs.py")}, "", []string{"-> 8"}, nil},
		{"call with args", []string{"--call", "double(4)", ctxFixture("funcs.py"), "--", "x"}, "--call runs one function", nil, nil},
		{"call with stdin", []string{"--call", "double(4)", "--stdin", ctxFixture("input.txt"), ctxFixture("funcs.py")}, "--call runs one function", nil, nil},
		{"args without --", []string{ctxFixture("prog.py"), "x"}, "go after --", nil, nil},
		{"missing stdin", []string{"--stdin", ctxFixture("missing.txt"), ctxFixture("prog.py")}, "--stdin", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			resetFlags(trace)
			resetDash(trace)
			out, err := runNDB(t, append([]string{"trace"}, c.args...)...)
			if c.wantErr == "" && err != nil {
				t.Fatalf("error %v\n%s", err, out)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("error %v, want %q\n%s", err, c.wantErr, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "<program>") {
				t.Errorf("names <program>:\n%s", out)
			}
		})
	}
	if _, err := os.Stat(ctxFixture("written.txt")); err == nil {
		os.Remove(ctxFixture("written.txt"))
		t.Error("a traced program wrote into its folder")
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := tracer.PythonFileName(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSandboxFlagsReachTracer: --no-sandbox and --max-trace-mb reach the
// tracer in trace, debug, gen and eval.
func TestSandboxFlagsReachTracer(t *testing.T) {
	if tracer.UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: the sandbox is off anyway")
	}
	trace := traceCommand(t)
	defer resetFlags(trace)
	sandboxed, plain := fmt.Sprintf("uid %d", tracer.SandboxUID), fmt.Sprintf("uid %d", os.Getuid())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", ctxFixture("uid.py")}, sandboxed},
		{[]string{"trace", "--no-sandbox", ctxFixture("uid.py")}, plain},
		{[]string{"trace", "--json", ctxFixture("big.py")}, `{"exit":"normal"}`},
		{[]string{"trace", "--json", "--max-trace-mb", "1", ctxFixture("big.py")}, `{"exit":"never","error":"`},
	} {
		resetFlags(trace)
		resetDash(trace)
		out, err := runNDB(t, c.args...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%v: %v, output lacks %q:\n%s", c.args, err, c.want, tail(out))
		}
	}
	resetFlags(trace)
	if _, err := runNDB(t, "trace", "--max-trace-mb", "-1", ctxFixture("uid.py")); err == nil || !strings.Contains(err.Error(), "--max-trace-mb") {
		t.Errorf("--max-trace-mb -1: %v", err)
	}

	// debug
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-sandbox", ctxFixture("uid.py")}, fmt.Sprintf(`"uid":"%d"`, os.Getuid())},
		{[]string{ctxFixture("uid.py")}, fmt.Sprintf(`"uid":"%d"`, tracer.SandboxUID)},
		{[]string{ctxFixture("big.py")}, `{"event":"exit","exit":"normal"}`},
		{[]string{"--max-trace-mb", "1", ctxFixture("big.py")}, `{"event":"exit","exit":"never"`},
	} {
		// a condition that never holds keeps the run recorded (a c with no
		// breakpoint runs unrecorded, and no trace limit applies)
		out, err := runDebugBatch(t, "b 3, i < 0\nc\n", c.args...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("debug %v: %v, output lacks %q:\n%s", c.args, err, c.want, tail(out))
		}
	}

	// gen: the options its workers' tracers get
	g := genFlags{sandbox: sandboxFlags{noSandbox: true, maxTraceMB: 3}, timeout: 1e9, maxEvents: 10, memoryMB: 64, reprLimit: 10}
	if o := g.tracerOptions("python3"); !o.NoSandbox || o.Limits.MaxTraceBytes != 3<<20 {
		t.Errorf("gen tracer options %+v", o)
	}
	if o := (genFlags{}).tracerOptions("python3"); o.NoSandbox || o.Limits.MaxTraceBytes != 0 {
		t.Errorf("gen default tracer options %+v", o)
	}

	// eval: its real engine
	for _, no := range []bool{false, true} {
		f := evalFlags{engine: "real", workers: 1, sandbox: sandboxFlags{noSandbox: no, maxTraceMB: 1}}
		f.python = "python3"
		if no {
			t.Setenv(tracer.UnsafeNoSandboxEnv, "") // restored after the test
		}
		eng, err := f.engines()
		if err != nil {
			t.Fatal(err)
		}
		src, _ := os.ReadFile(ctxFixture("uid.py"))
		tr, err := eng.real.Trace(context.Background(), tracer.Program{Source: string(src)})
		want := sandboxed
		if no {
			want = plain
		}
		if err != nil || !strings.Contains(tr.Stdout, want) {
			t.Errorf("eval --no-sandbox=%v: %v %q, want %q", no, err, tr.Stdout, want)
		}
		big, _ := os.ReadFile(ctxFixture("big.py"))
		tr, err = eng.real.Trace(context.Background(), tracer.Program{Source: string(big)})
		if err != nil || tr.Exit.Reason != "trace size" {
			t.Errorf("eval --max-trace-mb 1: %v %+v", err, tr.Exit)
		}
		eng.Close()
	}
}

// runDebugBatch runs `ndb debug --engine real --batch ARGS` with commands
// on stdin.
func runDebugBatch(t *testing.T, commands string, args ...string) (string, error) {
	t.Helper()
	return runDebugWith(t, commands, append([]string{"debug", "--engine", "real", "--batch"}, args...))
}

// runDebugWith runs ndb with args (a debug command) and commands on stdin.
func runDebugWith(t *testing.T, commands string, args []string) (string, error) {
	t.Helper()
	resetFlags(debugCmd) // an earlier run's flags (--call) must not leak in
	defer resetFlags(debugCmd)
	resetDash(debugCmd)
	var out bytes.Buffer
	rootCmd.SetIn(strings.NewReader(commands))
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(args)
	defer func() { rootCmd.SetArgs(nil); rootCmd.SetIn(nil); rootCmd.SetOut(nil); rootCmd.SetErr(nil) }()
	err := rootCmd.Execute()
	return out.String(), err
}

// TestDebugProgramContext: `ndb debug --engine real FILE -- ARGS` gets the
// same program context as trace; a program that cannot start exits
// non-zero naming the file, before any session.
func TestDebugProgramContext(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string
		want    []string
	}{
		{"context", []string{"--stdin", ctxFixture("input.txt"), ctxFixture("prog.py"), "--", "a", "b"}, "",
			[]string{`"data":"'from the data file'"`, `"greeting":"'HELLO!'"`, `"name":"'prog.py'","absolute":"True","args":"['a', 'b']","folder":"'context'","lines":"['first line', 'second line']"`,
				`"written":"'write refused PermissionError'"`, `{"event":"exit","exit":"normal","output":"HELLO! from the data file`}},
		{"syntax error", []string{ctxFixture("bad.py")}, ctxFixture("bad.py") + " does not compile", nil},
		{"undefined call", []string{"--call", "nope(1)", ctxFixture("funcs.py")}, `--call "nope(1)" fails`, nil},
		{"bad call", []string{"--call", "double(", ctxFixture("funcs.py")}, `--call "double(" does not compile`, nil},
		{"good call", []string{"--call", "double(4)", ctxFixture("funcs.py")}, "", []string{`"exit":"normal"`}},
		{"module fails before the call", []string{"--call", "double(4)", ctxFixture("bad_module.py")}, ctxFixture("bad_module.py") + ` fails before --call "double(4)" runs: EOFError`, nil},
		{"args without --", []string{ctxFixture("prog.py"), "a"}, "go after --", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runDebugBatch(t, "b 20\nc\nc\n", c.args...)
			if c.wantErr == "" && err != nil {
				t.Fatalf("error %v\n%s", err, out)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q\n%s", err, c.wantErr, out)
				}
				if strings.Contains(out, `"event"`) {
					t.Errorf("a session started:\n%s", out)
				}
				if strings.Contains(err.Error(), "<program>") {
					t.Errorf("error names <program>: %v", err)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// resetDash forgets where a previous in-process run of c saw "--" (pflag
// keeps it across parses).
func resetDash(c *cobra.Command) { c.Flags().Init(c.Name(), pflag.ContinueOnError) }

// tail is the end of a long output, for failure messages.
func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
