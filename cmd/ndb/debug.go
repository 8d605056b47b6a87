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
	"ndb/repl"
	"ndb/tracer"
)

// debugProgram is what an engine starts on.
type debugProgram struct {
	Path    string
	Program tracer.Program
	Python  string // --python: the interpreter (real engine, verification)
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

// newRealBackend traces the program once with the real interpreter and
// answers every command from that trace.
func newRealBackend(ctx context.Context, p debugProgram) (debugger.Backend, func() error, error) {
	tr, err := tracer.New(tracer.Options{Python: p.Python})
	if err != nil {
		return nil, nil, err
	}
	defer tr.Close()
	trace, err := tr.Trace(ctx, p.Program)
	if err != nil {
		return nil, nil, err
	}
	return debugger.NewTraceBackend(trace), nil, nil
}

var debugFlags struct {
	engine string
	call   string
	python string
	batch  bool
	color  string
}

var debugCmd = &cobra.Command{
	Use:   "debug [--engine real] [--call EXPR] [--batch] FILE",
	Short: "Debug a Python program with pdb's commands, forwards and backwards",
	Long: `debug starts a pdb-style terminal on FILE (a script, or with --call one call of a
function it defines, e.g. --call 'f("abc", 3)'). Commands: s, n, r, c, unt, b, cl, l, p, pp,
a, w, h, and the reverse commands rs, rn, rr, rc (type help in the terminal).

With --batch, commands are read from stdin one per line and the answers are JSON lines: the
first stop, then exactly one line per command (a stop with "event", or an object without
"event": "error" for a bad command).`,
	Args: cobra.ExactArgs(1),
	RunE: runDebug,
}

func init() {
	f := debugCmd.Flags()
	f.StringVar(&debugFlags.engine, "engine", debugDefaultEngine, "engine that answers the commands: real (runs the program under the tracer)")
	f.StringVar(&debugFlags.call, "call", "", "debug one call of a function of FILE, e.g. 'f(1, \"a\")'")
	f.StringVar(&debugFlags.python, "python", "python3", "Python interpreter for the real engine")
	f.BoolVar(&debugFlags.batch, "batch", false, "read commands from stdin, answer JSON lines")
	f.StringVar(&debugFlags.color, "color", "auto", "highlighting: auto, always, never")
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
	path := args[0]
	src, err := tracer.ReadSource(path)
	if err != nil {
		return err
	}
	prog := debugProgram{Path: path, Python: debugFlags.python,
		Program: tracer.Program{Path: path, Source: src, Call: debugFlags.call}}
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
