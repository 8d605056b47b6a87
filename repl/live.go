package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"ndb/debugger"
	"ndb/internal/termsafe"
	"ndb/tracer"
)

// This file holds what a live session (the real engine's program waiting
// at the stop) adds to the terminal: pdb's expression commands (p, pp, !,
// display of expressions, a line that is no command), j(ump), Ctrl-C while
// a command runs, and post-mortem debugging at an uncaught exception.
// Away from the live program (a stop reached backwards, a model engine)
// the commands read the recorded locals by name, as before.

// frames is the stack the frame commands act on: the traceback's frames in
// post-mortem, else the stop's.
func (t *Terminal) frames() []debugger.Stop {
	if pm, ok := t.s.PostMortem(); ok {
		return pm.Frames
	}
	return t.s.Frames()
}

// notLiveWhy says why an expression cannot be evaluated at this stop.
func (t *Terminal) notLiveWhy() string {
	if t.live {
		return "the program does not wait at this stop (it is in the recorded past: step forward to where it waits)"
	}
	return "no live program runs here (a recorded trace or a model's predictions)"
}

func (t *Terminal) notLive(what, expr string) error {
	return fmt.Errorf("%s %s: not a local's name, and %s", what, expr, t.notLiveWhy())
}

// evalCmd is pdb's p (tracer.EvalExpr) or pp (EvalPretty) in the selected
// frame.
func evalCmd(mode string) func(*Terminal, context.Context, string) (Result, error) {
	return func(t *Terminal, ctx context.Context, arg string) (Result, error) {
		cur, _, _, ok := t.frame()
		if !ok {
			return Result{}, errNotRunning
		}
		value := func(v string) Result {
			return Result{Message: termsafe.Text(v), Data: map[string]any{"name": arg, "value": v}}
		}
		// pdb puts these in the stopped frame's locals; the program's frame has none
		if t.sel == 0 && (arg == "__return__" && cur.Event == tracer.EventReturn || arg == "__exception__" && cur.Event == tracer.EventException) {
			return value(cur.Arg), nil
		}
		res, err := t.s.Eval(ctx, t.sel, arg, mode)
		switch {
		case err == nil && res.OK:
			return value(res.Text), nil
		case err == nil:
			return Result{}, errors.New(res.Text) // pdb: "*** NameError: ..."
		case !errors.Is(err, debugger.ErrNotLive):
			return Result{}, err
		case arg == "":
			return Result{}, fmt.Errorf("a variable name is expected")
		case !debugger.IsName(arg):
			return Result{}, t.notLive("p", arg)
		}
		if v, ok := cur.Locals.Get(arg); ok {
			return value(v), nil
		}
		return Result{}, fmt.Errorf("NameError: name %q is not a local here", arg)
	}
}

// execStmt is pdb's ! (and its default for a line that is no command): the
// statement runs in the selected frame; a bare expression prints its repr.
func (t *Terminal) execStmt(ctx context.Context, stmt string) (Result, error) {
	if _, _, _, ok := t.frame(); !ok {
		return Result{}, errNotRunning
	}
	res, err := t.s.Eval(ctx, t.sel, stmt, tracer.EvalExec)
	switch {
	case errors.Is(err, debugger.ErrNotLive):
		return Result{}, fmt.Errorf("cannot run %q as a statement: %s", stmt, t.notLiveWhy())
	case err != nil:
		return Result{}, err
	case !res.OK:
		return Result{}, errors.New(res.Text)
	}
	return Result{Message: termsafe.Text(strings.TrimSuffix(res.Text, "\n"))}, nil
}

// jumpCmd is pdb's j(ump) LINE: the bottom frame's next line becomes LINE.
func jumpCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	_, frames, i, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	if i+1 != len(frames) {
		return Result{}, errors.New("You can only jump within the bottom frame")
	}
	n, err := strconv.Atoi(arg)
	if err != nil {
		return Result{}, errors.New("The 'jump' command requires a line number")
	}
	if _, pm := t.s.PostMortem(); pm {
		return Result{}, errors.New("Jump failed: the program has ended (post mortem)")
	}
	prev := t.s.Current()
	st, err := t.s.Jump(ctx, n)
	if errors.Is(err, debugger.ErrNotLive) {
		return Result{}, fmt.Errorf("cannot jump: %s", t.notLiveWhy())
	}
	if err != nil {
		return Result{}, err
	}
	t.shown, t.listNext = &prev, 0
	return Result{Moved: true, Stop: st}, nil
}

// interruptNote is what the terminal prints before a stop that a live run
// made on its own: pdb's line after Ctrl-C, or the --timeout note.
func (t *Terminal) interruptNote(st debugger.Stop) string {
	switch st.Interrupted {
	case "":
		return ""
	case tracer.PauseTimeout:
		limit := "--timeout"
		if t.timeout > 0 {
			limit += " " + t.timeout.String()
		}
		return fmt.Sprintf("Program interrupted: the command ran for %s without reaching a stop. (Use 'cont' to resume; ndb debug --timeout sets the limit, 0: none.)", limit)
	}
	return "\nProgram interrupted. (Use 'cont' to resume)."
}

// catchInterrupt sends Ctrl-C (SIGINT) to the session while a command runs,
// as pdb's handler does during continue: the program stops at its next
// event. The returned func restores the default (Ctrl-C ends ndb outside a
// command; at the prompt readline reads it as a key).
func (t *Terminal) catchInterrupt() func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				t.s.Interrupt()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// renderPostMortem is what pdb prints when the program raised an uncaught
// exception: the traceback, its two post-mortem lines and the frame that
// raised it.
func (t *Terminal) renderPostMortem(pm debugger.PostMortem) string {
	var b strings.Builder
	if out, ok := t.s.Output(); ok && out != "" && !t.streaming {
		b.WriteString("--- program output ---\n" + termsafe.Text(strings.TrimSuffix(out, "\n")) + "\n")
	}
	if pm.Traceback != "" {
		b.WriteString(termsafe.Text(strings.TrimSuffix(pm.Traceback, "\n")) + "\n")
	}
	b.WriteString("Uncaught exception. Entering post mortem debugging\nRunning 'cont' or 'step' will restart the program\n")
	f := pm.Frames[len(pm.Frames)-1]
	fmt.Fprintf(&b, "> %s(%d)%s()\n", termsafe.Line(t.name), f.Lineno, termsafe.Line(f.Function))
	b.WriteString(t.renderContext(f))
	return strings.TrimSuffix(b.String(), "\n")
}
