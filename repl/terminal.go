package repl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"ndb/debugger"
	"ndb/internal/termsafe"
	"ndb/tracer"
)

// Options configure a Terminal.
type Options struct {
	Name    string // the program's name in stop headers, e.g. prog.py
	Color   bool   // ANSI highlighting of the current line and changed locals
	Context int    // source lines shown above and below the current line (default 2)
	Extra   *Extra // commands a front end adds, e.g. the neural session's back, resample, set, verify
	// Engine names the engine for the line Run prints first when the
	// session's states are predicted (e.g. "model"); the real engine's
	// output has no such line.
	Engine string
	// Timeout is the live run's time limit for one command (ndb debug
	// --timeout), named in the note of a stop it interrupted.
	Timeout time.Duration
	// Input is the live program's stdin (a tracer.Input): while a command
	// runs, the lines typed at the terminal Run reads go to it, and Ctrl-D
	// closes it (stdin.go). Only when Run's in is a terminal (*os.File);
	// Batch and other readers leave it unfed (set it only for a terminal,
	// as ndb debug does). Nil: the program's stdin is its own (empty, or
	// ndb debug --stdin FILE).
	Input io.WriteCloser
}

// Extra is a set of commands beyond the table, run by a front end's own
// handler (the neural session's commands live in package engine, which the
// terminal does not import).
type Extra struct {
	Help []ExtraHelp
	// Run runs line; ok is false when line is none of these commands.
	Run func(ctx context.Context, s *debugger.Session, line string) (message string, moved, ok bool, err error)
}

// ExtraHelp is the help of one Extra command.
type ExtraHelp struct{ Name, Args, Help string }

// Terminal renders one Session as pdb does. It is not safe for concurrent use.
type Terminal struct {
	s        *debugger.Session
	name     string
	color    bool
	context  int
	listNext int            // next line for a repeated `list`, 0: around the current line
	shown    *debugger.Stop // the stop shown before the current one
	lastCmd  string
	extra    *Extra
	engine   string
	sel      int                  // frames above the newest selected by up/down (0: the stop's own)
	displays map[int][]displayVar // display EXPR: per frame id, the expressions and their last values
	// live: the session ran a live program at its start (Session.Live), so
	// a line that is no command is a Python statement, as in pdb.
	live      bool
	timeout   time.Duration
	streaming bool              // the program's output is printed as it is written (Session.SetOutput)
	input     io.WriteCloser    // Options.Input
	forward   *programInput     // Run's: the terminal's lines to Input while a command runs
	aliases   map[string]string // pdb's alias NAME COMMAND (pdbcmds.go)
}

// displayVar is one `display NAME` of a frame and the value last shown.
type displayVar struct{ name, value string }

// New returns a terminal over s.
func New(s *debugger.Session, opts Options) *Terminal {
	if opts.Name == "" {
		opts.Name = "<program>"
	}
	if opts.Context <= 0 {
		opts.Context = 2
	}
	return &Terminal{s: s, name: opts.Name, color: opts.Color, context: opts.Context, extra: opts.Extra, engine: opts.Engine,
		live: s.Live(), timeout: opts.Timeout, input: opts.Input}
}

// Session is the session the terminal drives.
func (t *Terminal) Session() *debugger.Session { return t.s }

// Exec parses and runs one command line. An empty line repeats the last
// command, as in pdb.
func (t *Terminal) Exec(ctx context.Context, line string) (Result, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		line = t.lastCmd
		if line == "" {
			return Result{}, nil
		}
	}
	line = t.expandAlias(line)
	if stmt, ok := strings.CutPrefix(line, "!"); ok {
		t.lastCmd = line
		return t.execStmt(ctx, strings.TrimSpace(stmt))
	}
	name, arg := parseLine(line)
	c, ok := Lookup(name)
	if !ok {
		if t.extra != nil {
			prev := t.s.Current()
			msg, moved, handled, err := t.extra.Run(ctx, t.s, line)
			if handled {
				t.lastCmd = line
				if err != nil || !moved {
					return Result{Message: msg}, err
				}
				t.shown, t.listNext, t.sel = &prev, 0, 0
				cur := t.s.Current()
				return Result{Moved: true, Stop: cur, Message: msg, Displays: t.refreshDisplays(ctx, cur)}, nil
			}
		}
		if !t.live {
			return Result{}, fmt.Errorf("unknown command %q (type help)", name)
		}
		t.lastCmd = line // pdb's default: the line is a statement
		return t.execStmt(ctx, line)
	}
	t.lastCmd = line
	return c.run(t, ctx, arg)
}

// parseLine splits a command line as pdb's parseline does: the command is
// the leading identifier characters, the rest its argument.
func parseLine(line string) (name, arg string) {
	i := 0
	for i < len(line) && (line[i] == '_' || line[i] >= 'a' && line[i] <= 'z' || line[i] >= 'A' && line[i] <= 'Z' || line[i] >= '0' && line[i] <= '9') {
		i++
	}
	if i == 0 { // pdb: a line that does not start with a name is no command
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

func (t *Terminal) move(ctx context.Context, cmd debugger.Command) (Result, error) {
	prev := t.s.Current()
	if _, pm := t.s.PostMortem(); pm && !cmd.Reverse() {
		// pdb: a command that runs the program ends post-mortem debugging
		// and starts the program again, at its first stop.
		res, err := t.restart(ctx)
		if err != nil {
			return Result{}, err
		}
		res.Notes = []string{fmt.Sprintf("Post mortem debugger finished. The %s will be restarted", t.name)}
		return res, nil
	}
	before := t.s.BreakSpecs()
	st, err := t.s.Do(ctx, cmd)
	if err != nil {
		return Result{}, err
	}
	t.shown = &prev
	t.listNext, t.sel = 0, 0
	res := Result{Moved: true, Stop: st}
	if n := t.interruptNote(st); n != "" {
		res.Notes = append(res.Notes, n)
	}
	after := t.s.BreakSpecs()
	for _, b := range before { // pdb: "Deleted breakpoint N at FILE:LINE" when a tbreak stops
		if b.Temp && !slices.ContainsFunc(after, func(a debugger.BreakSpec) bool { return a.Number == b.Number }) {
			res.Notes = append(res.Notes, "Deleted "+t.bpString(b))
		}
	}
	res.Displays = t.refreshDisplays(ctx, st)
	return res, nil
}

const (
	ansiBold    = "\x1b[1m"
	ansiReverse = "\x1b[7m"
	ansiYellow  = "\x1b[33m"
	ansiReset   = "\x1b[0m"
)

// Banner is the line Run shows before the first stop: which engine answers
// when the states are predicted; "" for the real engine.
func (t *Terminal) Banner() string {
	if !t.s.Current().Predicted {
		return ""
	}
	name := t.engine
	if name == "" {
		name = "model"
	}
	line := fmt.Sprintf("ndb: %s engine (predicted states, not the real program)", name)
	if _, ok := t.extraHelp("verify"); ok {
		line += " — use `verify` to check"
	}
	return line
}

// RenderStop is the pdb-style view of a stop: the event marker, the
// location header, the source around the line with the line marked, and
// the locals, changed ones marked. A predicted stop has debugger.PredictedMark
// after its location line.
func (t *Terminal) RenderStop(st debugger.Stop) string {
	var b strings.Builder
	mark := ""
	if m := debugger.PredictedMark(st); m != "" {
		mark = "  " + m
	}
	if st.IsExit() {
		if pm, ok := t.s.PostMortem(); ok && st.Exit == tracer.ExitError {
			return t.renderPostMortem(pm)
		}
		switch st.Exit {
		case tracer.ExitNormal:
			b.WriteString("--Exit-- the program finished")
		case tracer.ExitError:
			if note, ok := t.s.ExitNote(); ok { // pdb's words for sys.exit(N)
				b.WriteString(note + "\n")
			}
			b.WriteString("--Exit-- uncaught exception")
		case tracer.ExitNever:
			b.WriteString("--Exit-- the run was stopped by a limit (treated as an infinite loop)")
		case debugger.ExitInvEntry:
			b.WriteString("--Entry-- before the start of the program (reverse commands stop here)")
		default:
			b.WriteString("--Exit-- " + st.Exit)
		}
		if st.Arg != "" {
			b.WriteString(": " + termsafe.Line(st.Arg))
		}
		b.WriteString(mark)
		if out, ok := t.s.Output(); ok && out != "" && st.Exit != debugger.ExitInvEntry && !t.streaming {
			// pdb shows output as it happens; a trace has it only as a
			// whole, shown in ndb's own view: escaped (docs/tracer.md)
			b.WriteString("\n--- program output ---\n" + termsafe.Text(strings.TrimSuffix(out, "\n")))
		}
		return b.String()
	}
	switch st.Event {
	case tracer.EventCall:
		b.WriteString("--Call--\n")
	case tracer.EventReturn:
		b.WriteString("--Return--\n")
	case tracer.EventException:
		b.WriteString(termsafe.Line(st.Arg) + "\n")
	case debugger.KindInvLineCall:
		b.WriteString("--Calls made by this line--\n")
	}
	fmt.Fprintf(&b, "> %s(%d)%s()", termsafe.Line(t.name), st.Lineno, termsafe.Line(st.Function))
	if st.Event == tracer.EventReturn {
		b.WriteString("->" + termsafe.Line(st.Arg))
	}
	b.WriteString(mark)
	b.WriteByte('\n')
	b.WriteString(t.renderContext(st))
	return strings.TrimSuffix(b.String(), "\n")
}

// renderContext is the source around st's line, the line marked, and its
// locals.
func (t *Terminal) renderContext(st debugger.Stop) string {
	var b strings.Builder
	lines := debugger.SourceLines(t.s.Source())
	first, last := max(1, st.Lineno-t.context), min(len(lines), st.Lineno+t.context)
	if st.Lineno >= 1 && st.Lineno <= len(lines) {
		b.WriteString(t.renderSourceAt(first, last, st.Lineno))
		b.WriteByte('\n')
	} else {
		fmt.Fprintf(&b, "-> %s\n", termsafe.Line(strings.TrimSpace(st.Src)))
	}
	b.WriteString(t.renderLocals(st))
	return b.String()
}

func (t *Terminal) renderSource(first, last int) string {
	mark := 0
	if f, _, _, ok := t.frame(); ok {
		mark = f.Lineno
	}
	return t.renderSourceAt(first, last, mark)
}

func (t *Terminal) renderSourceAt(first, last, mark int) string {
	lines := debugger.SourceLines(t.s.Source())
	breaks := map[int]bool{}
	for _, l := range t.s.Breaks() {
		breaks[l] = true
	}
	var b strings.Builder
	for n := first; n <= last && n <= len(lines); n++ {
		flag := "  "
		if breaks[n] {
			flag = "B "
		}
		arrow := "   "
		if n == mark {
			arrow = "-> "
		}
		text := fmt.Sprintf("%4d %s%s%s", n, flag, arrow, termsafe.Line(lines[n-1]))
		if n == mark && t.color {
			text = ansiReverse + text + ansiReset
		}
		b.WriteString(text)
		if n < last && n < len(lines) {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// changed lists the locals of st that are new or different since the
// previously shown stop of the same frame.
func (t *Terminal) changed(st debugger.Stop) map[string]bool {
	out := map[string]bool{}
	if t.shown == nil || t.shown.IsExit() || t.shown.Frame != st.Frame {
		return out
	}
	for _, v := range st.Locals {
		if old, ok := t.shown.Locals.Get(v.Name); !ok || old != v.Value {
			out[v.Name] = true
		}
	}
	return out
}

func (t *Terminal) renderLocals(st debugger.Stop) string {
	if len(st.Locals) == 0 {
		return ""
	}
	ch := t.changed(st)
	parts := make([]string, 0, len(st.Locals))
	for _, v := range st.Locals {
		// reprs are the program's: escaped, so that they cannot drive the terminal
		s := termsafe.Line(v.Name) + " = " + termsafe.Line(v.Value)
		if ch[v.Name] {
			if t.color {
				s = ansiYellow + ansiBold + s + ansiReset
			} else {
				s = "*" + s
			}
		}
		parts = append(parts, s)
	}
	return "locals: " + strings.Join(parts, ", ") + "\n"
}

// Run is the interactive loop: it shows the current stop, then reads
// commands until quit or end of input. With interactive set it uses
// readline (line editing, history and Tab completion: see Complete);
// otherwise it reads lines from in.
func (t *Terminal) Run(ctx context.Context, in io.Reader, out io.Writer, interactive bool) error {
	if b := t.Banner(); b != "" {
		fmt.Fprintln(out, b)
	}
	var mu sync.Mutex // the program's output may come from the tracer's reader
	t.streaming = t.s.SetOutput(func(s string) {
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(out, s)
	})
	defer t.s.SetOutput(nil)
	t.live = t.live || t.streaming // a live session whose first stop is replayed (ndb debug --call)
	fmt.Fprintln(out, t.RenderStop(t.s.Current()))
	next, closeFn, err := lineReader(in, out, interactive, completer{t})
	if err != nil {
		return err
	}
	defer closeFn()
	t.forward = newProgramInput(in, t.input)
	defer func() { t.forward = nil }()
	return t.loop(ctx, next, out)
}

// loop runs commands read by next until quit or end of input. Ctrl-C at
// the prompt (readline.ErrInterrupt) cancels the line, as in pdb, instead
// of ending the session and its history.
func (t *Terminal) loop(ctx context.Context, next func() (string, error), out io.Writer) error {
	for {
		line, err := next()
		if errors.Is(err, readline.ErrInterrupt) {
			fmt.Fprintln(out, "--KeyboardInterrupt-- (q or Ctrl-D to leave)")
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		stopCatching := t.catchInterrupt()
		var res Result
		t.forward.during(func() { res, err = t.Exec(ctx, line) })
		stopCatching()
		switch {
		case err != nil:
			fmt.Fprintln(out, "*** "+termsafe.Text(err.Error()))
		case res.Quit:
			return nil
		case res.Moved:
			for _, n := range res.Notes {
				fmt.Fprintln(out, n)
			}
			fmt.Fprintln(out, t.RenderStop(res.Stop))
			for _, d := range res.Displays {
				fmt.Fprintln(out, d)
			}
		case res.Message != "":
			fmt.Fprintln(out, res.Message)
		}
	}
}

func lineReader(in io.Reader, out io.Writer, interactive bool, complete readline.AutoCompleter) (func() (string, error), func(), error) {
	if interactive {
		cfg := &readline.Config{Prompt: "(ndb) ", HistoryLimit: 1000, Stdout: out, AutoComplete: complete}
		if f, ok := in.(*os.File); ok && f != os.Stdin {
			readlineOn(cfg, f) // readline's defaults are os.Stdin's
		}
		rl, err := readline.NewEx(cfg)
		if err != nil {
			return nil, nil, err
		}
		return rl.Readline, func() { rl.Close() }, nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return func() (string, error) {
		fmt.Fprint(out, "(ndb) ")
		if !sc.Scan() {
			fmt.Fprintln(out)
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}
		return sc.Text(), nil
	}, func() {}, nil
}

// BatchStop is the JSON line of a non-exit stop in batch mode.
type BatchStop struct {
	Event    string        `json:"event"`
	Lineno   int           `json:"lineno"`
	Function string        `json:"function"`
	Depth    int           `json:"depth"`
	Src      string        `json:"src"`
	Locals   tracer.Locals `json:"locals"`
	Arg      *string       `json:"arg,omitempty"` // return and exception stops only
	// Interrupted: a live run stopped here by Ctrl-C ("interrupt") or
	// --timeout ("timeout"), not at a stop of the command.
	Interrupted string `json:"interrupted,omitempty"`
	// Output is what the program printed during the command (a live run
	// streams it), in the answer line of that command.
	Output string `json:"output,omitempty"`
	// Predicted and Confidence: set on a model engine's stops (see
	// debugger.Stop); absent on the real engine's.
	Predicted  bool                 `json:"predicted,omitempty"`
	Confidence *debugger.Confidence `json:"confidence,omitempty"`
}

// BatchExit is the JSON line of an exit: arg is the uncaught exception or
// the limit that stopped the run, when known.
type BatchExit struct {
	Event string `json:"event"` // "exit"
	Exit  string `json:"exit"`  // normal, error, never, inv_exit_entry
	Arg   string `json:"arg,omitempty"`
	// Output: as BatchStop's.
	Output string `json:"output,omitempty"`

	Predicted  bool                 `json:"predicted,omitempty"`
	Confidence *debugger.Confidence `json:"confidence,omitempty"`
}

// BatchLine is the batch JSON value of st: a BatchStop or a BatchExit.
func BatchLine(st debugger.Stop) any {
	if st.IsExit() {
		return BatchExit{Event: debugger.EventExit, Exit: st.Exit, Arg: st.Arg, Predicted: st.Predicted, Confidence: st.Confidence}
	}
	b := BatchStop{Event: st.Event, Lineno: st.Lineno, Function: st.Function, Depth: st.Depth, Src: st.Src, Locals: st.Locals,
		Interrupted: st.Interrupted, Predicted: st.Predicted, Confidence: st.Confidence}
	if b.Locals == nil {
		b.Locals = tracer.Locals{}
	}
	if st.Event == tracer.EventReturn || st.Event == tracer.EventException {
		arg := st.Arg
		b.Arg = &arg
	}
	return b
}

// Batch runs the batch mode: it writes the current stop as a JSON line,
// then reads commands from in, one per line, and writes exactly one JSON
// line per command: a stop when it moved, else an object without "event"
// ("error" for a bad command, "message" and data fields otherwise). Blank
// lines are skipped; quit ends the run. What a live program prints is in
// the "output" field of the line of the command during which it printed it
// (the first line: what it printed before its first stop).
func Batch(ctx context.Context, t *Terminal, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var (
		mu     sync.Mutex
		output strings.Builder
	)
	t.streaming = t.s.SetOutput(func(s string) {
		mu.Lock()
		defer mu.Unlock()
		output.WriteString(s)
	})
	defer t.s.SetOutput(nil)
	t.live = t.live || t.streaming
	printed := func() string {
		mu.Lock()
		defer mu.Unlock()
		s := output.String()
		output.Reset()
		return s
	}
	first := BatchLine(t.s.Current())
	if err := enc.Encode(withOutput(first, printed())); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		res, err := t.Exec(ctx, line)
		var v any
		switch {
		case err != nil:
			v = map[string]any{"error": err.Error()}
		case res.Moved:
			v = BatchLine(res.Stop)
		default:
			m := map[string]any{}
			for k, x := range res.Data {
				m[k] = x
			}
			if res.Message != "" {
				m["message"] = res.Message
			}
			v = m
		}
		if err := enc.Encode(withOutput(v, printed())); err != nil {
			return err
		}
		if res.Quit {
			return nil
		}
	}
	return sc.Err()
}

// withOutput adds the program's output printed during a command to its
// batch line v.
func withOutput(v any, output string) any {
	if output == "" {
		return v
	}
	switch x := v.(type) {
	case BatchStop:
		x.Output = output
		return x
	case BatchExit:
		x.Output = output
		return x
	case map[string]any:
		x["output"] = output
		return x
	}
	return v
}
