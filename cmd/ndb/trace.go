package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
	out       io.Writer // where the trace goes; nil: standard output
}

func init() {
	var f traceFlags
	d := tracer.DefaultLimits()
	cmd := &cobra.Command{
		Use:   "trace [flags] FILE",
		Short: "Run a Python program under the tracer and print every event",
		Long: `trace runs FILE (or one call of a function it defines, with --call) in a
sandboxed interpreter under sys.settrace and prints every event of the
program's own code: a readable view, or JSON lines with --json (one object per
state, then an exit line; schema in docs/tracer.md).

Exit status: 0 when the program ran, whatever it did (an uncaught exception or
sys.exit is part of its trace); 1, after the trace is printed, when it could
not start: FILE or the --call expression does not compile, or the --call
expression itself fails (a function FILE does not define, wrong arguments).`,
		Example: `  ndb trace examples/primes.py
  ndb trace --call 'f("banana", 4)' examples/vowels.py
  ndb trace --json --max-events 1000 examples/primes.py`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("memory") && cmd.Flags().Changed("memory-mb") {
				return fmt.Errorf("give --memory-mb only (--memory is its deprecated spelling)")
			}
			g := f
			g.out = cmd.OutOrStdout()
			return runTrace(cmd.Context(), g, args[0])
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
	src, err := tracer.ReadSource(path)
	if err != nil {
		return err
	}
	t, err := tracer.New(tracer.Options{Python: f.python, Limits: tracer.Limits{
		Timeout: f.timeout, MaxEvents: f.maxEvents, MemoryBytes: mem,
		ReprLimit: f.reprLimit, MaxOutput: f.maxOutput,
	}})
	if err != nil {
		return err
	}
	defer t.Close()
	tr, err := t.Trace(ctx, tracer.Program{Path: path, Source: src, Call: f.call})
	if err != nil {
		return err
	}
	nameProgram(tr, path)
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

// programFile is the file name the tracer compiles a program under.
const programFile = "<program>"

// nameProgram puts path where the tracer's exceptions name the program
// '<program>' (a SyntaxError's filename): the tracer compiles every
// program under that name, so the message names the file the user gave.
func nameProgram(tr *tracer.Trace, path string) {
	quoted, name := pyQuote(programFile), pyQuote(path)
	tr.Exit.Error = strings.ReplaceAll(tr.Exit.Error, quoted, name)
	for i := range tr.States {
		if s := &tr.States[i]; s.Event == tracer.EventException {
			s.Arg = strings.ReplaceAll(s.Arg, quoted, name)
		}
	}
}

// notStarted is the error of a trace whose program never ran: the
// program or the --call expression does not compile, or the call
// expression itself raised (in the wrapper's main, before any frame of the
// program's own functions: an undefined function, wrong arguments).
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

// pyQuote is Python's repr of a str for the plain text of a path: single
// quotes, or double quotes when it holds a single quote and no double one.
func pyQuote(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
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
