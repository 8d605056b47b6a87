package tracer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var ctxTracers struct {
	once sync.Once
	ts   map[string]*Tracer
	err  error
}

// contextTracers are two tracers for the program-context tests: with the
// audit hooks ("audit") and without ("kernel": only the kernel refuses).
func contextTracers(t *testing.T) map[string]*Tracer {
	t.Helper()
	ctxTracers.once.Do(func() {
		ctxTracers.ts = map[string]*Tracer{}
		for _, name := range []string{"audit", "kernel"} {
			tr, err := New(Options{Python: os.Getenv("NDB_PYTHON"), noAudit: name == "kernel" && !UnsafeNoSandbox()})
			if err != nil {
				ctxTracers.err = err
				return
			}
			ctxTracers.ts[name] = tr
		}
	})
	if ctxTracers.err != nil {
		t.Fatalf("New: %v", ctxTracers.err)
	}
	return ctxTracers.ts
}

func contextProgram(t *testing.T, name, call string, c *Context) Program {
	t.Helper()
	path := filepath.Join("testdata", "context", name)
	src, err := ReadSource(path)
	if err != nil {
		t.Fatal(err)
	}
	return Program{Path: path, Source: src, Call: call, Context: c}
}

// TestProgramContext: a script given Context runs as `python FILE ARGS`
// would, from its folder: sibling imports, reading a sibling file, writes
// refused (or going to a scratch copy with Writable), __file__, sys.argv,
// sys.path[0], stdin; syntax errors name the file; a --call form gets the
// file name only; a later program of no folder does not see the folder.
func TestProgramContext(t *testing.T) {
	wd, _ := os.Getwd()
	dir := filepath.Join(wd, "testdata", "context")
	prog := filepath.Join("testdata", "context", "prog.py")
	for _, name := range []string{"audit", "kernel"} {
		tr := contextTracers(t)[name]
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				name    string
				p       Program
				exit    string
				want    []string // substrings of stdout (or of the exit error for an error)
				notWant []string
			}{
				{"script", contextProgram(t, "prog.py", "", &Context{Args: []string{"a", "b"}, Stdin: []byte("line 1\nline 2\n")}), ExitNormal,
					[]string{"42 hello from data\n", "file " + wd + "/" + prog + "\n",
						"argv ['" + prog + "', 'a', 'b']\n", "path0 " + dir + "\n", "cwd " + dir + "\n",
						"write refused", "stdin 'line 1\\nline 2\\n'\n"}, []string{"write ok"}},
				{"no stdin", contextProgram(t, "prog.py", "", &Context{}), ExitNormal,
					[]string{"argv ['" + prog + "']\n", "stdin ''\n"}, nil},
				{"writable", contextProgram(t, "prog.py", "", &Context{Writable: true}), ExitNormal,
					[]string{"42 hello from data\n", "write ok x\n", "cwd " + dir + "\n"}, []string{"write refused"}},
				{"syntax error", contextProgram(t, "bad.py", "", &Context{}), ExitError,
					[]string{"SyntaxError('invalid syntax', ('" + wd + "/testdata/context/bad.py', 2"}, nil},
				{"call", contextProgram(t, "calls.py", "where()", &Context{}), ExitNormal, nil, nil},
				{"no context", Program{Source: "import os\nprint(sorted(os.listdir(" + pyQuoteTest(dir) + ")), __file__)\n"}, ExitNormal,
					[]string{"[] <program>\n"}, nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					res, err := tr.Trace(context.Background(), c.p)
					if err != nil {
						t.Fatal(err)
					}
					if res.Exit.Kind != c.exit {
						t.Fatalf("exit %+v, want %s; stdout %q", res.Exit, c.exit, res.Stdout)
					}
					text := res.Stdout
					if c.exit == ExitError {
						text = res.Exit.Error
					}
					for _, w := range c.want {
						if !strings.Contains(text, w) {
							t.Errorf("lacks %q:\n%s", w, text)
						}
					}
					for _, w := range c.notWant {
						if strings.Contains(text, w) {
							t.Errorf("has %q:\n%s", w, text)
						}
					}
					for _, s := range res.States {
						if s.Function == "double" {
							t.Errorf("traced the sibling module's function: %+v", s)
						}
					}
					if c.name == "call" {
						last := res.States[len(res.States)-1]
						if last.Arg != "('calls.py', False)" {
							t.Errorf("call form: return %q, want the file's name and the scratch folder as cwd", last.Arg)
						}
					}
				})
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
				os.Remove(filepath.Join(dir, "out.txt"))
				t.Errorf("a program wrote into its folder on the host")
			}
			healthy(t, tr)
		})
	}
}

// TestProgramContextKernelRefusesWrites: without audit hooks, the
// kernel refuses a write into the program's folder (read-only mount).
func TestProgramContextKernelRefusesWrites(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("no sandbox")
	}
	tr := contextTracers(t)["kernel"]
	p := contextProgram(t, "prog.py", "", &Context{})
	p.Source = "import errno\ntry:\n    open('out.txt', 'w')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])\n"
	res, err := tr.Trace(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "EROFS\n" {
		t.Errorf("write into the folder: %q, want EROFS (%+v)", res.Stdout, res.Exit)
	}
}

// TestProgramContextErrors: a Context needs a real file; arguments and
// stdin need a script.
func TestProgramContextErrors(t *testing.T) {
	tr := contextTracers(t)["audit"]
	for _, p := range []Program{
		{Path: "mbppplus/Mbpp_2", Source: "x = 1\n", Context: &Context{}},
		{Path: "testdata/context", Source: "x = 1\n", Context: &Context{}},
		{Path: "", Source: "x = 1\n", Context: &Context{}},
		contextProgram(t, "calls.py", "where()", &Context{Args: []string{"x"}}),
	} {
		if _, err := tr.Trace(context.Background(), p); err == nil {
			t.Errorf("%q (call %q): no error", p.Path, p.Call)
		}
	}
	// A data-set id in Path without Context is only a name, as before.
	res, err := tr.Trace(context.Background(), Program{Path: "mbppplus/Mbpp_2", Source: "x = (\n"})
	if err != nil || !strings.Contains(res.Exit.Error, "'<program>'") {
		t.Errorf("no context: %v %+v", err, res)
	}
}

func TestFolderWarning(t *testing.T) {
	if !isRoot() {
		t.Skip("only root runs programs as another uid")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	p := filepath.Join(dir, "p.py")
	os.WriteFile(p, []byte("x = 1\n"), 0o644)
	if w := FolderWarning(p); !strings.Contains(w, "not readable by the sandbox's uid 65534") {
		t.Errorf("0700 folder: %q", w)
	}
	os.Chmod(dir, 0o755)
	if w := FolderWarning(p); w != "" {
		t.Errorf("0755 folder: %q", w)
	}
}

func pyQuoteTest(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// TestProgramInTmp: a program whose folder is /tmp itself runs (the
// host's /tmp, bound read-only, covered the worker's own /tmp: the worker
// could not start), sees its folder, writes its scratch folder only, and
// the next program of no folder runs on the same tracer.
func TestProgramInTmp(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: nothing bound")
	}
	path := filepath.Join("/tmp", fmt.Sprintf("ndb-in-tmp-%d.py", time.Now().UnixNano()))
	src := `import os, sys
print(os.getcwd(), sys.path[0], os.path.basename(__file__))
print(len(open(__file__).read()) > 0)
with open(os.path.join(os.environ['TMPDIR'], 'mine'), 'w') as f:
    f.write('ok')
try:
    open('/tmp/ndb-in-tmp-written', 'w')
except OSError as e:
    print('refused', type(e).__name__)
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	tt, err := New(Options{Python: os.Getenv("NDB_PYTHON"), ProgramDir: "/tmp"})
	if err != nil {
		t.Fatalf("New with /tmp bound: %v", err)
	}
	defer tt.Close()
	for _, p := range []Program{{Path: path, Source: src, Context: &Context{}}, {Source: src}} {
		res, err := tt.Trace(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v %q", res.Exit, res.Stdout)
		if p.Context != nil {
			want := fmt.Sprintf("/tmp /tmp %s\nTrue\nrefused PermissionError\n", filepath.Base(path))
			if res.Exit.Kind != ExitNormal || res.Stdout != want {
				t.Errorf("program in /tmp: %+v %q, want %q", res.Exit, res.Stdout, want)
			}
		} else if res.Exit.Kind != ExitError || !strings.Contains(res.Exit.Error, "FileNotFoundError") {
			// __file__ is <program>: no such file, but the program ran
			t.Errorf("program of no folder after it: %+v %q", res.Exit, res.Stdout)
		}
	}
	mustNotExist(t, "/tmp/ndb-in-tmp-written")
}
