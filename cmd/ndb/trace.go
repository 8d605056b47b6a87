package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ndb/tracer"
)

// traceFlags are the flags of `ndb trace`.
type traceFlags struct {
	call      string
	python    string
	json      bool
	timeout   time.Duration
	maxEvents int
	memoryMB  int64
	memory    string // the deprecated --memory SIZE; "" when not given
	reprLimit int
	maxOutput int
	sandbox   sandboxFlags
	context   contextFlags
	args      []string  // the program's sys.argv[1:] (after --)
	out       io.Writer // where the trace goes; nil: standard output
	errOut    io.Writer // warnings; nil: standard error
}

// sandboxFlags are the tracer options of every command that runs
// programs (trace, debug, gen, eval): one spelling everywhere.
type sandboxFlags struct {
	noSandbox  bool
	maxTraceMB int64
}

func (f *sandboxFlags) add(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noSandbox, "no-sandbox", false, "run programs without the kernel sandbox (bubblewrap), as "+tracer.UnsafeNoSandboxEnv+"=1 does: only for code you trust (docs/tracer.md)")
	fs.Int64Var(&f.maxTraceMB, "max-trace-mb", tracer.DefaultLimits().MaxTraceBytes>>20, "bound on one run's trace in ndb's memory, MiB (past it the run ends: exit never, reason trace size)")
}

// check refuses a bad --max-trace-mb (0 is the default).
func (f *sandboxFlags) check() error {
	if f.maxTraceMB < 0 {
		return fmt.Errorf("--max-trace-mb must not be negative (0: the default)")
	}
	return nil
}

func (f *sandboxFlags) traceBytes() int64 { return f.maxTraceMB << 20 }

// contextFlags give a program run from its file what Python gives it
// (tracer.Context): --stdin and --writable; its arguments come after --.
type contextFlags struct {
	stdin    string
	writable bool
}

func (f *contextFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.stdin, "stdin", "", "feed the program's standard input from this file (default: empty)")
	fs.BoolVar(&f.writable, "writable", false, "let the program write in its folder: a scratch copy, discarded at the end (default: read-only)")
}

// programArgs splits a command's arguments: FILE, then the program's own
// arguments after --.
func programArgs(cmd *cobra.Command, args []string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, fmt.Errorf("give the program's FILE")
	}
	dash := cmd.ArgsLenAtDash()
	if dash == -1 && len(args) > 1 {
		return "", nil, fmt.Errorf("one FILE (got %d arguments); the program's own arguments go after --: %s FILE -- %s",
			len(args), cmd.CommandPath(), strings.Join(args[1:], " "))
	}
	if dash == 0 {
		return "", nil, fmt.Errorf("give the program's FILE before --")
	}
	return args[0], args[1:], nil
}

// program is the tracer.Program of FILE run as Python runs it
// (tracer.Context): a script gets its folder, args and stdin; a --call
// only its file name.
func (f *contextFlags) program(path, src, call string, args []string) (tracer.Program, error) {
	p := tracer.Program{Path: path, Source: src, Call: call, Context: &tracer.Context{Args: args, Writable: f.writable}}
	if strings.TrimSpace(call) != "" && (len(args) > 0 || f.stdin != "" || f.writable) {
		return p, fmt.Errorf("--call runs one function: program arguments, --stdin and --writable are for scripts")
	}
	if f.stdin != "" {
		fi, err := os.Stat(f.stdin)
		if err != nil {
			return p, fmt.Errorf("--stdin: %w", err)
		}
		if fi.Size() > tracer.MaxStdin {
			return p, fmt.Errorf("--stdin: %s has %d bytes, more than %d", f.stdin, fi.Size(), tracer.MaxStdin)
		}
		b, err := os.ReadFile(f.stdin)
		if err != nil {
			return p, fmt.Errorf("--stdin: %w", err)
		}
		p.Context.Stdin = b
	}
	if strings.TrimSpace(call) == "" {
		if _, err := tracer.ProgramDir(path); err != nil {
			return p, err
		}
	}
	return p, nil
}

// warnFolder prints why the sandboxed program cannot read its folder.
func warnFolder(w io.Writer, p tracer.Program, noSandbox bool) {
	if noSandbox || tracer.UnsafeNoSandbox() || tracer.ContextDir(p) == "" {
		return
	}
	if msg := tracer.FolderWarning(p.Path); msg != "" {
		fmt.Fprintln(w, "ndb: warning:", msg)
	}
}

func init() {
	var f traceFlags
	d := tracer.DefaultLimits()
	cmd := &cobra.Command{
		Use:   "trace [flags] FILE [-- ARGS...]",
		Short: "Run a Python program under the tracer and print every event",
		Long: `trace runs FILE (or one call of a function it defines, with --call) in a
sandboxed interpreter under sys.settrace and prints every event of the
program's own code: a readable view, or JSON lines with --json (one object per
state, then an exit line; schema in docs/tracer.md).

FILE runs as "python FILE ARGS" runs it (docs/tracer.md, "Program context"):
its folder is visible read-only and is the working directory and sys.path[0]
(sibling imports and data files work), __file__ and sys.argv are set as Python
sets them, ARGS after -- are sys.argv[1:], --stdin feeds its standard input.
With --call only the file name applies.

Exit status: 0 when the program ran, whatever it did (an uncaught exception or
sys.exit is part of its trace); 1, after the trace is printed, when it could
not start: FILE or the --call expression does not compile, FILE's top level
fails before the --call runs, or the --call expression itself fails (a
function FILE does not define, wrong arguments).`,
		Example: `  ndb trace examples/primes.py
  ndb trace --call 'f("banana", 4)' examples/vowels.py
  ndb trace --json --max-events 1000 examples/primes.py
  ndb trace --stdin input.txt prog.py -- --verbose data.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("memory") && cmd.Flags().Changed("memory-mb") {
				return fmt.Errorf("give --memory-mb only (--memory is its deprecated spelling)")
			}
			path, progArgs, err := programArgs(cmd, args)
			if err != nil {
				return err
			}
			g := f
			g.args = progArgs
			g.out = cmd.OutOrStdout()
			g.errOut = cmd.ErrOrStderr()
			return runTrace(cmd.Context(), g, path)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.call, "call", "", `trace this call of a function defined in FILE, e.g. 'f(1, "a")'`)
	fl.StringVar(&f.python, "python", "python3", "Python interpreter to run")
	fl.BoolVar(&f.json, "json", false, "print JSON lines instead of the readable view")
	fl.DurationVar(&f.timeout, "timeout", d.Timeout, "wall-clock limit of the run")
	fl.IntVar(&f.maxEvents, "max-events", d.MaxEvents, "event limit (exit never when reached)")
	fl.Int64Var(&f.memoryMB, "memory-mb", d.MemoryBytes>>20, "address-space limit of the run, MiB")
	fl.StringVar(&f.memory, "memory", "", "address-space limit as a size such as 512M or 2G")
	fl.MarkDeprecated("memory", "use --memory-mb (MiB), as ndb gen does")
	fl.IntVar(&f.reprLimit, "repr-limit", d.ReprLimit, "characters of a repr kept before the cut marker")
	fl.IntVar(&f.maxOutput, "max-output", d.MaxOutput, "characters of the program's stdout kept")
	f.sandbox.add(fl)
	f.context.add(fl)
	rootCmd.AddCommand(cmd)
}

func runTrace(ctx context.Context, f traceFlags, path string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	mem := f.memoryMB << 20
	if f.memory != "" {
		var err error
		if mem, err = parseBytes(f.memory); err != nil {
			return fmt.Errorf("--memory: %w", err)
		}
	}
	if f.timeout <= 0 || f.maxEvents <= 0 || mem <= 0 || f.reprLimit <= 0 || f.maxOutput <= 0 {
		return fmt.Errorf("--timeout, --max-events, --memory-mb, --repr-limit and --max-output must be positive")
	}
	if err := f.sandbox.check(); err != nil {
		return err
	}
	src, err := tracer.ReadSource(path)
	if err != nil {
		return err
	}
	p, err := f.context.program(path, src, f.call, f.args)
	if err != nil {
		return err
	}
	errOut := f.errOut
	if errOut == nil {
		errOut = os.Stderr
	}
	warnFolder(errOut, p, f.sandbox.noSandbox)
	t, err := tracer.New(tracer.Options{Python: f.python, NoSandbox: f.sandbox.noSandbox,
		ProgramDir: tracer.ContextDir(p), Limits: tracer.Limits{
			Timeout: f.timeout, MaxEvents: f.maxEvents, MemoryBytes: mem,
			ReprLimit: f.reprLimit, MaxOutput: f.maxOutput, MaxTraceBytes: f.sandbox.traceBytes(),
		}})
	if err != nil {
		return err
	}
	defer t.Close()
	// The trace is held whole, then written: the collector would let the
	// heap grow to twice what is live while the view is written (ndb
	// reached 300 MB for a full 128 MiB trace). A soft limit of 1.5 times
	// the trace's bound makes it collect sooner (docs/tracer.md, "The
	// record channel").
	tb := f.sandbox.traceBytes()
	if tb <= 0 {
		tb = tracer.DefaultLimits().MaxTraceBytes
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(tb + tb/2 + 16<<20))
	if t.Info().OwnUID {
		fmt.Fprintln(errOut, "ndb: warning: no subordinate ids for this user (/etc/subuid, newuidmap): the program runs with your own uid and can read what you can in its folder (docs/tracer.md, \"Unprivileged users\")")
	}
	tr, err := t.Trace(ctx, p)
	if err != nil {
		return err
	}
	write := tracer.WriteText
	if f.json {
		write = tracer.WriteJSONLines
	}
	out := f.out
	if out == nil {
		out = os.Stdout
	}
	if err := write(out, tr); err != nil {
		return err
	}
	return notStarted(tr, path)
}

// notStarted is the error of a trace whose program never ran: the
// program or the --call expression does not compile, the module body
// run to define the called function raised, or the call expression itself
// raised (in the wrapper's main, before any frame of the program's own
// functions: an undefined function, wrong arguments).
func notStarted(tr *tracer.Trace, path string) error {
	if tr.Exit.Kind != tracer.ExitError {
		return nil
	}
	if tr.Exit.Reason == "syntax error" {
		if strings.Contains(tr.Exit.Error, "'<call>'") {
			return fmt.Errorf("--call %q does not compile: %s", tr.Call, tr.Exit.Error)
		}
		return fmt.Errorf("%s does not compile: %s", path, tr.Exit.Error)
	}
	if tr.Call == "" {
		return nil
	}
	if len(tr.States) == 0 {
		// the module body (run untraced, to define the function) failed
		return fmt.Errorf("%s fails before --call %q runs: %s", path, tr.Call, tr.Exit.Error)
	}
	// With --call the trace starts at the wrapper main (depth 0). An
	// exception raised in main itself, not propagated from a callee (whose
	// exception and return events, with the same exception, would come just
	// before), is the call expression's.
	for i, s := range tr.States {
		if s.Event != tracer.EventException || s.Depth != 0 {
			continue
		}
		if i > 1 {
			ret, exc := tr.States[i-1], tr.States[i-2]
			if ret.Event == tracer.EventReturn && ret.Depth > 0 && exc.Event == tracer.EventException && exc.Arg == s.Arg {
				return nil
			}
		}
		return fmt.Errorf("--call %q fails: %s (raised by the call expression itself, not by code of %s)", tr.Call, s.Arg, path)
	}
	return nil
}

// parseBytes reads sizes such as 1073741824, 512M, 1G, 1GiB.
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, t[:len(t)-1]
	case strings.HasSuffix(t, "G"):
		mult, t = 1<<30, t[:len(t)-1]
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 512M, 2G or a number of bytes)", s)
	}
	return int64(n * float64(mult)), nil
}
