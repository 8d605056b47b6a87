package main

import (
	"context"
	"fmt"
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
	memory    string
	reprLimit int
	maxOutput int
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
state, then an exit line; schema in docs/tracer.md).`,
		Example: `  ndb trace examples/fib.py
  ndb trace --call 'f(1, "a")' prog.py
  ndb trace --json --max-events 1000 prog.py`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTrace(cmd.Context(), f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.call, "call", "", `trace this call of a function defined in FILE, e.g. 'f(1, "a")'`)
	fl.StringVar(&f.python, "python", "python3", "Python interpreter to run")
	fl.BoolVar(&f.json, "json", false, "print JSON lines instead of the readable view")
	fl.DurationVar(&f.timeout, "timeout", d.Timeout, "wall-clock limit of the run")
	fl.IntVar(&f.maxEvents, "max-events", d.MaxEvents, "event limit (exit never when reached)")
	fl.StringVar(&f.memory, "memory", "1G", "memory limit (address space), e.g. 512M, 2G or bytes")
	fl.IntVar(&f.reprLimit, "repr-limit", d.ReprLimit, "characters of a repr kept before the cut marker")
	fl.IntVar(&f.maxOutput, "max-output", d.MaxOutput, "characters of the program's stdout kept")
	rootCmd.AddCommand(cmd)
}

func runTrace(ctx context.Context, f traceFlags, path string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	mem, err := parseBytes(f.memory)
	if err != nil {
		return fmt.Errorf("--memory: %w", err)
	}
	if f.timeout <= 0 || f.maxEvents <= 0 || f.reprLimit <= 0 || f.maxOutput <= 0 {
		return fmt.Errorf("--timeout, --max-events, --repr-limit and --max-output must be positive")
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
	if f.json {
		return tracer.WriteJSONLines(os.Stdout, tr)
	}
	return tracer.WriteText(os.Stdout, tr)
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
