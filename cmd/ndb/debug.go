package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"ndb/debugger"
	"ndb/engine"
	"ndb/repl"
	"ndb/tracer"
)

// debugProgram is what an engine starts on.
type debugProgram struct {
	Path    string
	Program tracer.Program
	Python  string // --python: the interpreter (real engine, verification)
	// NoSandbox and Limits are the real engine's tracer options
	// (--no-sandbox, --max-trace-mb), for verification too.
	NoSandbox bool
	Limits    tracer.Limits
}

// debugEngine builds the Backend of one --engine. close releases what it
// holds (a tracer worker, a model); it may be nil.
type debugEngine func(ctx context.Context, p debugProgram) (b debugger.Backend, close func() error, err error)

// debugEngines maps --engine names to their constructors: the one place
// engines plug into `ndb debug`. Another file of this package adds one
// with `func init() { debugEngines["model"] = newModelBackend }`.
var debugEngines = map[string]debugEngine{
	"real": newRealBackend,
}

// debugExtra returns the extra terminal commands of an engine (the neural
// session's back, resample, set, verify); nil for none. Set by engines.go.
var debugExtra func(engine string, p debugProgram) (extra *repl.Extra, close func() error)

// debugDefaultEngine is --engine's default.
var debugDefaultEngine = "real"

// newBackend returns the Backend of engine for p.
func newBackend(ctx context.Context, engine string, p debugProgram) (debugger.Backend, func() error, error) {
	mk, ok := debugEngines[engine]
	if !ok {
		names := make([]string, 0, len(debugEngines))
		for n := range debugEngines {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, nil, fmt.Errorf("unknown engine %q (have: %s)", engine, strings.Join(names, ", "))
	}
	return mk(ctx, p)
}

// newRealBackend traces the program once with the real engine
// (engine.RealEngine) and answers every command from that trace. A program
// that cannot start (it or the --call expression does not compile, or the
// call expression itself raises) is an error naming the file, as in
// `ndb trace`, before any session starts.
func newRealBackend(ctx context.Context, p debugProgram) (debugger.Backend, func() error, error) {
	e := engine.NewReal(engine.Options{Python: p.Python, NoSandbox: p.NoSandbox, Limits: p.Limits, Workers: 1})
	defer e.Close()
	trace, err := e.Trace(ctx, p.Program)
	if err != nil {
		return nil, nil, err
	}
	if err := notStarted(trace, p.Path); err != nil {
		return nil, nil, err
	}
	return debugger.NewTraceBackend(trace), nil, nil
}

var debugFlags struct {
	engine  string
	call    string
	python  string
	batch   bool
	color   string
	sandbox sandboxFlags
	context contextFlags
}

var debugCmd = &cobra.Command{
	Use:   "debug [--engine real] [--call EXPR] [--batch] FILE [-- ARGS...]",
	Short: "Debug a Python program with pdb's commands, forwards and backwards",
	Long: `debug starts a pdb-style terminal on FILE (a script, or with --call one call of a
function it defines, e.g. --call 'f("abc", 3)'). Commands: s, n, r, c, unt, b, cl, l, p, pp,
a, w, h, and the reverse commands rs, rn, rr, rc (type help in the terminal).

FILE runs as "python FILE ARGS" runs it (docs/tracer.md, "Program context"): its folder
is visible read-only and is the working directory and sys.path[0], __file__ and sys.argv
are set as Python sets them, ARGS after -- are sys.argv[1:], --stdin FILE feeds its
standard input (--batch reads the debugger's commands from ndb's own stdin).
A program that does not compile, or a --call that fails by itself, exits non-zero.

With --batch, commands are read from stdin one per line and the answers are JSON lines: the
first stop, then exactly one line per command (a stop with "event", or an object without
"event": "error" for a bad command).`,
	Args: cobra.MinimumNArgs(1),
	RunE: runDebug,
}

func init() {
	f := debugCmd.Flags()
	f.StringVar(&debugFlags.engine, "engine", debugDefaultEngine, "engine that answers the commands: real (runs the program under the tracer)")
	f.StringVar(&debugFlags.call, "call", "", "debug one call of a function of FILE, e.g. 'f(1, \"a\")'")
	f.StringVar(&debugFlags.python, "python", "python3", "Python interpreter for the real engine")
	f.BoolVar(&debugFlags.batch, "batch", false, "read commands from stdin, answer JSON lines")
	f.StringVar(&debugFlags.color, "color", "auto", "highlighting: auto, always, never")
	debugFlags.sandbox.add(f)
	debugFlags.context.add(f)
	rootCmd.AddCommand(debugCmd)
}

func runDebug(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	switch debugFlags.color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("--color wants auto, always or never, got %q", debugFlags.color)
	}
	path, progArgs, err := programArgs(cmd, args)
	if err != nil {
		return err
	}
	if err := debugFlags.sandbox.check(); err != nil {
		return err
	}
	src, err := tracer.ReadSource(path)
	if err != nil {
		return err
	}
	p, err := debugFlags.context.program(path, src, debugFlags.call, progArgs)
	if err != nil {
		return err
	}
	prog := debugProgram{Path: path, Python: debugFlags.python, Program: p,
		NoSandbox: debugFlags.sandbox.noSandbox, Limits: tracer.Limits{MaxTraceBytes: debugFlags.sandbox.traceBytes()}}
	if debugFlags.engine == engine.Real {
		warnFolder(cmd.ErrOrStderr(), p, prog.NoSandbox)
	}
	b, closeFn, err := newBackend(ctx, debugFlags.engine, prog)
	if err != nil {
		return err
	}
	if closeFn != nil {
		defer closeFn()
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		return err
	}
	in, out := cmd.InOrStdin(), cmd.OutOrStdout()
	stdinTTY := in == os.Stdin && term.IsTerminal(int(os.Stdin.Fd()))
	stdoutTTY := out == os.Stdout && term.IsTerminal(int(os.Stdout.Fd()))
	color := debugFlags.color == "always" || (debugFlags.color == "auto" && stdoutTTY)
	opts := repl.Options{Name: filepath.Base(path), Color: color && !debugFlags.batch, Engine: debugFlags.engine}
	if debugExtra != nil {
		extra, closeExtra := debugExtra(debugFlags.engine, prog)
		if closeExtra != nil {
			defer closeExtra()
		}
		opts.Extra = extra
	}
	t := repl.New(s, opts)
	if debugFlags.batch {
		return repl.Batch(ctx, t, in, out)
	}
	return t.Run(ctx, in, out, stdinTTY && stdoutTTY)
}
