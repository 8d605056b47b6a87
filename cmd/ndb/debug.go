package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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

// debugEngineFlags are debug's engine options (--model, --openai-*).
var debugEngineFlags engineFlags

// debugRegistry holds the engines of one `ndb debug` run: an
// engine.Registry, as dap, mcp and eval get theirs, on this run's options.
// The real engine is live: the program runs under the tracer only as far as
// the commands need and waits at the stop where the user is, so
// expressions evaluate in its frames (the backend holds the program's
// process until Session.Close); its one pooled worker traces for verify.
// A program that cannot start is refused by startedOrErr once the session
// has its first stop.
func debugRegistry(p debugProgram) (*engine.Registry, error) {
	opts, err := debugEngineFlags.options()
	if err != nil {
		return nil, err
	}
	opts.Python, opts.NoSandbox, opts.Limits = p.Python, p.NoSandbox, p.Limits
	opts.Workers, opts.Live = 1, true
	return engine.NewRegistry(opts), nil
}

// startedOrErr: a program that cannot start (it or the --call expression
// does not compile, or the call expression itself raises) is an error
// naming the file, as in `ndb trace`, before any session is shown. A live
// run that does not compile, or whose module fails before the call, has
// ended at its first stop. A call expression that raises by itself (an
// undefined function, wrong arguments) does so right after main's --Call--
// and line: two steps show it (the next event is then main's exception,
// else the callee's --Call--), and Back returns to the first stop.
func startedOrErr(ctx context.Context, s *debugger.Session, path string) error {
	rec, ok := s.Backend().(debugger.Recording) // the real engine: a run of the program
	if !ok {
		return nil
	}
	if s.Current().IsExit() || rec.Tree().T.Call == "" {
		return notStarted(rec.Tree().T, path)
	}
	live := s.Live()
	steps := 0
	for steps < 2 {
		st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto})
		if err != nil {
			return err
		}
		steps++
		if st.IsExit() || st.Depth > 0 || st.Event == tracer.EventException {
			break
		}
	}
	// The run has not ended: notStarted weighs main's own exception as
	// at an error exit.
	probe := *rec.Tree().T
	probe.Exit = tracer.Exit{Kind: tracer.ExitError}
	if err := notStarted(&probe, path); err != nil {
		return err
	}
	for range steps {
		s.Back()
	}
	if live {
		// The live program now waits two steps on: run it anew, so that
		// it waits at the first stop (p EXPR works there). A --call's
		// module usually only defines functions.
		_, err := s.Restart(ctx)
		return err
	}
	return nil
}

var debugFlags struct {
	engine  string
	call    string
	python  string
	batch   bool
	color   string
	sandbox sandboxFlags
	context contextFlags
	live    liveFlags
}

var debugCmd = &cobra.Command{
	Use:   "debug [--engine real] [--call EXPR] [--batch] FILE [-- ARGS...]",
	Short: "Debug a Python program with pdb's commands, forwards and backwards",
	Long: `debug starts a pdb-style terminal on FILE (a script, or with --call one call of a
function it defines, e.g. --call 'f("abc", 3)'). Commands: s, n, r, c, unt, j, b, cl, l, p, pp,
!, display, a, w, u, d, h, and the reverse commands rs, rn, rr, rc (type help in the terminal).

With --engine real the session is live (docs/debugger.md, "The terminal on a live session"):
the program runs only as far as the commands need and waits at the stop, so p, pp, display
and ! (or any line that is no command) evaluate in its frames, its output is printed as it
is written, Ctrl-C stops a running command where the program is, and an uncaught exception
enters pdb's post-mortem. --timeout interrupts one command that runs longer (0: never);
--max-events bounds the events recorded (a c with no breakpoint runs at full speed,
unrecorded, as under pdb; reverse commands after it re-run the program: docs/debugger.md).

FILE runs as "python FILE ARGS" runs it (docs/tracer.md, "Program context"): its folder
is visible read-only and is the working directory and sys.path[0], __file__ and sys.argv
are set as Python sets them, ARGS after -- are sys.argv[1:], --stdin FILE feeds its
standard input (--batch reads the debugger's commands from ndb's own stdin). Without
--stdin, on a terminal, the live program reads what you type while a command runs, as
under pdb (input() works; Ctrl-D ends its input; at the prompt you type commands).
A program that does not compile, or a --call that fails by itself, exits non-zero.

With --batch, commands are read from stdin one per line and the answers are JSON lines: the
first stop, then exactly one line per command (a stop with "event", or an object without
"event": "error" for a bad command); what the program printed during a command is in that
line's "output".`,
	Args: cobra.MinimumNArgs(1),
	RunE: runDebug,
}

func init() {
	f := debugCmd.Flags()
	// The default is the registry's policy (engine.DefaultName): model when
	// a default model exists, else real; a --model makes it model too.
	f.StringVar(&debugFlags.engine, "engine", engine.DefaultName(engine.Options{}), "engine that answers the commands: real (runs the program under the tracer), model (ndb's model predicts every state), openai or cwm (an OpenAI-compatible endpoint)")
	f.StringVar(&debugFlags.call, "call", "", "debug one call of a function of FILE, e.g. 'f(1, \"a\")'")
	f.StringVar(&debugFlags.python, "python", "python3", "Python interpreter for the real engine")
	f.BoolVar(&debugFlags.batch, "batch", false, "read commands from stdin, answer JSON lines")
	f.StringVar(&debugFlags.color, "color", "auto", "highlighting: auto, always, never")
	debugFlags.live.add(f)
	debugFlags.sandbox.add(f)
	debugFlags.context.add(f)
	debugEngineFlags.add(f, false, engine.InteractiveJumps)
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
	lim, err := debugFlags.live.limits(tracer.Limits{MaxTraceBytes: debugFlags.sandbox.traceBytes()})
	if err != nil {
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
		NoSandbox: debugFlags.sandbox.noSandbox, Limits: lim}
	reg, err := debugRegistry(prog)
	if err != nil {
		return err
	}
	defer reg.Close()
	name := debugFlags.engine
	if !cmd.Flags().Changed("engine") {
		name = reg.Default()
	}
	eng, err := reg.Get(name, "")
	if err != nil {
		return err
	}
	if eng.Name() == engine.Real {
		warnFolder(cmd.ErrOrStderr(), p, prog.NoSandbox)
	}
	// On a terminal the live program reads what the user types while a
	// command runs, as under pdb; --stdin FILE and --batch keep theirs
	// (docs/debugger.md, "The program's input").
	var input *tracer.Input
	if eng.Name() == engine.Real && !debugFlags.batch && p.Context != nil && p.Context.Stdin == nil &&
		cmd.InOrStdin() == os.Stdin && term.IsTerminal(int(os.Stdin.Fd())) {
		input = tracer.NewInput()
		p.Context.Input = input
	}
	s, err := reg.Open(ctx, eng.Name(), "", p)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := startedOrErr(ctx, s, path); err != nil {
		return err
	}
	in, out := cmd.InOrStdin(), cmd.OutOrStdout()
	stdinTTY := in == os.Stdin && term.IsTerminal(int(os.Stdin.Fd()))
	stdoutTTY := out == os.Stdout && term.IsTerminal(int(os.Stdout.Fd()))
	color := debugFlags.color == "always" || (debugFlags.color == "auto" && stdoutTTY)
	opts := repl.Options{Name: filepath.Base(path), Color: color && !debugFlags.batch, Engine: eng.Name(), Timeout: debugFlags.live.timeout,
		Extra: neuralCommands(s)}
	if input != nil {
		opts.Input = input
	}
	t := repl.New(s, opts)
	if debugFlags.batch {
		return repl.Batch(ctx, t, in, out)
	}
	return t.Run(ctx, in, out, stdinTTY && stdoutTTY)
}
