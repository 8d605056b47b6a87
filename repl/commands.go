// Package repl is ndb's pdb-style terminal: the first client of
// debugger.Session. One declarative command table drives the interactive
// terminal, the batch mode (JSON lines) and the help text.
package repl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"ndb/debugger"
	"ndb/internal/termsafe"
	"ndb/tracer"
)

// Command is one terminal command: its name, aliases, argument synopsis,
// one-paragraph help and handler.
type Command struct {
	Name    string
	Aliases []string
	Args    string
	Help    string
	run     func(t *Terminal, ctx context.Context, arg string) (Result, error)
}

// Result is what a command did: moved to Stop, or produced a message and,
// for batch mode, structured data.
type Result struct {
	Moved   bool
	Stop    debugger.Stop
	Message string
	Data    map[string]any // batch fields of a command that does not move
	Quit    bool
	// Notes are shown before a stop (a tbreak that stopped is deleted),
	// Displays after it (display NAME values that changed), as pdb does.
	Notes    []string
	Displays []string
}

// Commands is the command table, in help order.
var Commands []Command

func init() {
	Commands = []Command{
		moveEntry("step", "", nil),
		moveEntry("next", "", nil),
		moveEntry("return", "", nil),
		moveEntry("continue", "", nil),
		moveEntry("until", "[LINE]", untilCmd),
		{Name: "break", Aliases: []string{"b"}, Args: "[WHERE[, COND]]", Help: "Set a breakpoint, numbered as pdb numbers them: WHERE is LINE, FILE:LINE (FILE: the program's file) or FUNC (a function, Class.method or module.function of the program: stops at the first line it executes; placed at its co_firstlineno, or at the def line before the def has run). With COND it stops only when COND is true: on the real engine's live sessions any Python expression, evaluated in the frame as pdb does (an error in it stops); elsewhere an expression of local names, literals, list and tuple displays, not/and/or, comparisons, in, is None, int arithmetic, subscripts by an int, len/sum/min/max/abs/ord/chr/str/int/sorted/list/tuple and a str's methods (upper, split, join, count, ...), over the locals' reprs. Without argument, pdb's list of breakpoints (number, disposition, enabled, condition, ignore count, hits).",
			run: breakCmd},
		{Name: "tbreak", Args: "[WHERE[, COND]]", Help: "Set a temporary breakpoint: like break, but cleared when it stops the program.",
			run: tbreakCmd},
		{Name: "clear", Aliases: []string{"cl"}, Args: "[N...|FILE:LINE]", Help: "Clear the breakpoints numbered N..., or those at FILE:LINE; without argument, clear all (without pdb's confirmation question).",
			run: clearCmd},
		{Name: "condition", Args: "N [COND]", Help: "Set breakpoint N's condition to COND (as break takes one); without COND, make it unconditional.",
			run: conditionCmd},
		{Name: "ignore", Args: "N [COUNT]", Help: "Ignore breakpoint N the next COUNT times it is reached with its condition true (0 or none: stop next time).",
			run: ignoreCmd},
		{Name: "disable", Args: "N...", Help: "Disable the breakpoints numbered N... (they stay listed and can be enabled again).",
			run: enableCmd(false)},
		{Name: "enable", Args: "N...", Help: "Enable the breakpoints numbered N....",
			run: enableCmd(true)},
		moveEntry("rs", "", nil),
		moveEntry("rn", "", nil),
		moveEntry("rr", "", nil),
		moveEntry("rc", "", nil),
		{Name: "list", Aliases: []string{"l"}, Args: "[FIRST[, LAST]]", Help: "List source: 11 lines around the current line, then the next 11 on repeat; around FIRST; or FIRST to LAST.",
			run: listCmd},
		{Name: "longlist", Aliases: []string{"ll"}, Help: "List the whole source of the selected frame's function (the whole file at module level), the current line marked.",
			run: longlistCmd},
		{Name: "p", Args: "EXPR", Help: "Print the value (repr) of EXPR in the selected frame. Where the live program waits (the real engine) EXPR is any expression; elsewhere (a stop reached backwards, a model engine) a local's name, read from the recorded locals; __return__ and __exception__ at a return or exception stop.",
			run: evalCmd(tracer.EvalExpr)},
		{Name: "pp", Args: "EXPR", Help: "Like p, pretty-printed (pprint) where the live program waits.",
			run: evalCmd(tracer.EvalPretty)},
		{Name: "!", Args: "STMT", Help: "Run the Python statement STMT in the selected frame. Only where the live program waits: a bare expression prints its repr, assignments change the program's state; a line that is no command runs as a statement too, as in pdb.",
			run: func(t *Terminal, ctx context.Context, arg string) (Result, error) { return t.execStmt(ctx, arg) }},
		{Name: "jump", Aliases: []string{"j"}, Args: "LINE", Help: "Set the next line to run in the bottom frame (pdb's jump). Only where the live program waits, at a line event; pdb's rules apply (no jump into a block, out of a finally).",
			run: jumpCmd},
		{Name: "args", Aliases: []string{"a"}, Help: "Print the arguments of the selected frame's function, as they were at its call.",
			run: argsCmd},
		{Name: "retval", Aliases: []string{"rv"}, Help: "Print the return value at a --Return-- stop (of the stop's own frame).",
			run: retvalCmd},
		{Name: "display", Args: "[EXPR]", Help: "Show EXPR in the selected frame now and after each stop in that frame where its value (repr) changed. Where the live program does not wait, EXPR must be a local's name; without EXPR, list the displayed expressions.",
			run: displayCmd},
		{Name: "undisplay", Args: "[EXPR]", Help: "Stop displaying EXPR in the selected frame; without EXPR, all of that frame's.",
			run: undisplayCmd},
		{Name: "whatis", Args: "EXPR", Help: "Print the type of EXPR's value in the selected frame (Function NAME, Method NAME, Class MODULE.NAME, or the type), where the live program waits.",
			run: whatisCmd},
		{Name: "source", Args: "EXPR", Help: "Print the source of the function, method or class EXPR names in the selected frame, where the live program waits.",
			run: sourceCmd},
		{Name: "alias", Args: "[NAME [COMMAND]]", Help: "Make NAME run COMMAND (%1, %2... are replaced by NAME's arguments, %* by all of them); with NAME alone show its command, without arguments list every alias.",
			run: aliasCmd},
		{Name: "unalias", Args: "NAME", Help: "Delete the alias NAME.",
			run: unaliasCmd},
		{Name: "commands", Args: "[N]", Help: "Command lists at breakpoints, not run by ndb: type the commands after the stop (docs/debugger.md).",
			run: refuseCmd("commands: ndb does not run command lists at breakpoints (its terminal has no command-list mode); type the commands after the stop")},
		{Name: "interact", Help: "An interactive interpreter, not run by ndb: the program runs in a sandboxed worker; use ! STMT (or a line that is no command) to run Python in the frame.",
			run: refuseCmd("interact: the program runs in a sandboxed worker that has no terminal for an interpreter; use ! STMT (or a line that is no command) to run Python statements in the frame")},
		{Name: "debug", Args: "CODE", Help: "A recursive debugger over CODE, not run by ndb (docs/debugger.md).",
			run: refuseCmd("debug: ndb has no recursive debugger over code run in the frame (its history is one run's); call the code from the program and step into it with s")},
		{Name: "where", Aliases: []string{"w", "bt"}, Help: "Print the call stack, outermost first; the selected frame is marked with >.",
			run: whereCmd},
		{Name: "up", Aliases: []string{"u"}, Args: "[COUNT]", Help: "Select the frame COUNT (default 1) levels up the stack (toward the caller): p, a, l, ll, display and w then refer to it.",
			run: upCmd},
		{Name: "down", Aliases: []string{"d"}, Args: "[COUNT]", Help: "Select the frame COUNT (default 1) levels down the stack (toward the stop's own frame).",
			run: downCmd},
		{Name: "restart", Aliases: []string{"run"}, Args: "[ARGS]", Help: "Start the program again from its first stop, as pdb's restart does: breakpoints and displays are kept, the history before it is dropped. The real engine runs the program anew (a recorded trace is replayed). ARGS (split as a shell does) become the program's sys.argv[1:], kept by later restarts; only on the real engine's live sessions.",
			run: restartCmd},
		{Name: "help", Aliases: []string{"h"}, Args: "[COMMAND]", Help: "List the commands, or show one command's help.",
			run: helpCmd},
		{Name: "quit", Aliases: []string{"q", "exit"}, Help: "Leave the debugger.",
			run: func(t *Terminal, ctx context.Context, arg string) (Result, error) {
				return Result{Quit: true, Message: "quit"}, nil
			}},
	}
}

// Lookup finds a command by name or alias.
func Lookup(name string) (*Command, bool) {
	for i := range Commands {
		c := &Commands[i]
		if c.Name == name {
			return c, true
		}
		for _, a := range c.Aliases {
			if a == name {
				return c, true
			}
		}
	}
	return nil, false
}

// Usage is a command's synopsis, e.g. "b(reak) [LINE]" in pdb's style.
func (c *Command) Usage() string {
	name := c.Name
	for _, a := range c.Aliases {
		if strings.HasPrefix(c.Name, a) && len(a) < len(c.Name) {
			name = a + "(" + c.Name[len(a):] + ")"
			break
		}
	}
	var others []string
	for _, a := range c.Aliases {
		if !strings.HasPrefix(c.Name, a) {
			others = append(others, a)
		}
	}
	if len(others) > 0 {
		name += " | " + strings.Join(others, " | ")
	}
	if c.Args != "" {
		name += " " + c.Args
	}
	return name
}

// HelpTable is the whole command table as a Markdown table: the terminal's
// `help` and the commands section of docs/debugger.md.
func HelpTable() string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	for _, c := range Commands {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Usage(), c.Help)
	}
	return b.String()
}

// moveEntry is the terminal's entry for a move of debugger.MoveTable (its
// names and help are the table's); run nil moves by its Command.
func moveEntry(name, args string, run func(*Terminal, context.Context, string) (Result, error)) Command {
	mv, ok := debugger.MoveNamed(name)
	if !ok {
		panic("repl: no move " + name)
	}
	if run == nil {
		run = moveCmd(mv.Command)
	}
	return Command{Name: mv.Name, Aliases: mv.Aliases, Args: args, Help: mv.Help, run: run}
}

func moveCmd(cmd debugger.Command) func(*Terminal, context.Context, string) (Result, error) {
	return func(t *Terminal, ctx context.Context, arg string) (Result, error) {
		if arg != "" {
			return Result{}, fmt.Errorf("this command takes no argument")
		}
		return t.move(ctx, cmd)
	}
}

func untilCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	cmd := debugger.Moves["until"]
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil {
			return Result{}, fmt.Errorf("error in argument: %q", arg)
		}
		if cur := t.s.Current(); !cur.IsExit() && n <= cur.Lineno {
			return Result{}, fmt.Errorf(`"until" line number is smaller than current line number`)
		}
		cmd.Line = n
	}
	return t.move(ctx, cmd)
}

func lineArg(arg string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil {
		return 0, fmt.Errorf("line number expected, got %q", arg)
	}
	return n, nil
}

func nonNil(l []int) []int {
	if l == nil {
		return []int{}
	}
	return l
}

func listCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	nlines := len(debugger.SourceLines(t.s.Source()))
	cur, _, _, running := t.frame()
	var first, last int
	switch {
	case arg == "" && t.listNext > 0:
		first = t.listNext
		last = first + 10
	case arg == "":
		center := cur.Lineno
		if !running || center == 0 {
			center = 1
		}
		first, last = max(1, center-5), max(1, center-5)+10
	default:
		parts := strings.SplitN(arg, ",", 2)
		a, err := lineArg(parts[0])
		if err != nil {
			return Result{}, err
		}
		if len(parts) == 2 {
			b, err := lineArg(parts[1])
			if err != nil {
				return Result{}, err
			}
			if b < a { // pdb: a count
				b = a + b
			}
			first, last = a, b
		} else {
			first, last = max(1, a-5), max(1, a-5)+10
		}
	}
	first = max(first, 1)
	eof := last > nlines // pdb: "[EOF]" after a listing that reached the end
	last = min(last, nlines)
	if first > nlines {
		t.listNext = nlines + 1
		return Result{Message: "[EOF]", Data: map[string]any{"first": first, "last": first - 1, "lines": []string{}}}, nil
	}
	if last < first {
		return Result{}, fmt.Errorf("end of file")
	}
	t.listNext = last + 1
	text := t.renderSource(first, last)
	if eof {
		text += "\n[EOF]"
	}
	return Result{Message: text, Data: map[string]any{"first": first, "last": last, "lines": debugger.SourceLines(t.s.Source())[first-1 : last]}}, nil
}

func argsCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f, _, _, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	args, ok := t.s.ArgsOf(f)
	if !ok {
		return Result{}, fmt.Errorf("the arguments of this frame are not known")
	}
	var b strings.Builder
	for _, v := range args {
		fmt.Fprintf(&b, "%s = %s\n", termsafe.Line(v.Name), termsafe.Line(v.Value))
	}
	if args == nil {
		args = tracer.Locals{}
	}
	return Result{Message: strings.TrimSuffix(b.String(), "\n"), Data: map[string]any{"args": args}}, nil
}

func whereCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	_, stack, sel, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	var b strings.Builder
	frames := make([]map[string]any, 0, len(stack))
	for i, st := range stack {
		mark := " "
		if i == sel {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s %s(%d)%s()\n-> %s\n", mark, termsafe.Line(t.name), st.Lineno, termsafe.Line(st.Function), termsafe.Line(strings.TrimSpace(st.Src)))
		frames = append(frames, map[string]any{"function": st.Function, "lineno": st.Lineno, "src": st.Src})
	}
	return Result{Message: strings.TrimSuffix(b.String(), "\n"), Data: map[string]any{"stack": frames}}, nil
}

func helpCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	if arg != "" {
		c, ok := Lookup(arg)
		if !ok {
			if h, found := t.extraHelp(arg); found {
				msg := strings.TrimSpace(h.Name+" "+h.Args) + "\n    " + h.Help
				return Result{Message: msg, Data: map[string]any{"message": msg}}, nil
			}
			return Result{}, fmt.Errorf("no command %q", arg)
		}
		msg := c.Usage() + "\n    " + c.Help
		return Result{Message: msg, Data: map[string]any{"message": msg}}, nil
	}
	var b strings.Builder
	b.WriteString("Commands (an empty line repeats the last one):\n")
	for _, c := range Commands {
		fmt.Fprintf(&b, "  %-28s %s\n", c.Usage(), firstSentence(c.Help))
	}
	if t.extra != nil {
		b.WriteString("Commands of this engine:\n")
		for _, h := range t.extra.Help {
			fmt.Fprintf(&b, "  %-28s %s\n", strings.TrimSpace(h.Name+" "+h.Args), firstSentence(h.Help))
		}
	}
	b.WriteString("Type help COMMAND for more.")
	return Result{Message: b.String(), Data: map[string]any{"message": b.String()}}, nil
}

func firstSentence(s string) string {
	if i := strings.Index(s, ": "); i > 0 && i < 60 {
		return s[:i]
	}
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func (t *Terminal) extraHelp(name string) (ExtraHelp, bool) {
	if t.extra != nil {
		for _, h := range t.extra.Help {
			if h.Name == name {
				return h, true
			}
		}
	}
	return ExtraHelp{}, false
}
