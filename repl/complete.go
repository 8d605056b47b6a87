package repl

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/chzyer/readline"

	"ndb/internal/pysource"
	"ndb/tracer"
)

// Tab completion in the interactive terminal (readline's AutoCompleter):
// command names with their abbreviations; after p, pp and display the
// selected frame's local names (where the live program waits, as pdb:
// the frame's locals, globals and builtins, and after "NAME." the
// attributes of NAME); after undisplay the names displayed in that
// frame (pdb's complete_undisplay); after b and tbreak (also after FILE:)
// the program's top-level function names; after cl, disable, enable,
// condition and ignore the breakpoint numbers;
// after help the command names.

// Complete lists the completions of the word that ends at pos (a rune
// offset into line, as readline gives it), sorted; nil when there is none.
func (t *Terminal) Complete(line string, pos int) []string {
	_, cands := t.complete(prefixAt(line, pos))
	return cands
}

func prefixAt(line string, pos int) string {
	rs := []rune(line)
	return string(rs[:max(0, min(pos, len(rs)))])
}

// complete returns the word being completed at the end of text and its
// completions.
func (t *Terminal) complete(text string) (string, []string) {
	text = strings.TrimLeft(text, " \t")
	name, rest, hasArg := strings.Cut(text, " ")
	if !hasArg {
		return name, withPrefix(t.commandNames(), name)
	}
	i := strings.LastIndexAny(rest, " \t,:")
	word, before := rest[i+1:], strings.TrimSpace(rest[:i+1])
	c, ok := Lookup(name)
	if !ok {
		return word, nil
	}
	var all []string
	switch c.Name {
	case "p", "pp", "display", "whatis", "!":
		if t.s.Live() { // pdb's _complete_expression: names, or a dotted name's attributes
			expr := exprWord.FindString(rest)
			return expr, withPrefix(t.liveNames(expr), expr)
		}
		if before == "" {
			all = t.localNames(c.Name != "display")
		}
	case "undisplay":
		if before == "" {
			all = t.displayedNames()
		}
	case "break", "tbreak":
		if before == "" || strings.HasSuffix(before, ":") && !strings.ContainsAny(before, " \t,") {
			all = topLevelFunctions(t.s.Source())
		}
	case "clear", "disable", "enable", "condition", "ignore":
		if before == "" || c.Name != "condition" && c.Name != "ignore" { // pdb's _complete_bpnumber
			for _, b := range t.s.BreakSpecs() {
				all = append(all, strconv.Itoa(b.Number))
			}
		}
	case "help":
		if before == "" {
			all = t.commandNames()
		}
	}
	return word, withPrefix(all, word)
}

// exprWord is the dotted name being typed at the end of an expression.
var exprWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.]*$|$`)

// liveNames are the completions of a dotted name in the selected frame
// where the live program waits: for "a.b.c", a.b's attributes (dir) as
// "a.b.NAME"; for a plain name, the frame's locals and globals and the
// builtins. Only a dotted name is evaluated, never a call.
func (t *Terminal) liveNames(word string) []string {
	src := "sorted(set(locals()) | set(globals()) | set(dir(__import__('builtins'))))"
	prefix := ""
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		obj := word[:i]
		if !dottedName.MatchString(obj) {
			return nil
		}
		src, prefix = "dir("+obj+")", obj+"."
	}
	res, err := t.s.Eval(context.Background(), t.sel, src, tracer.EvalExpr)
	if err != nil || !res.OK {
		return nil
	}
	var out []string
	for _, m := range quotedName.FindAllStringSubmatch(res.Text, -1) {
		out = append(out, prefix+m[1])
	}
	return out
}

var quotedName = regexp.MustCompile(`'([A-Za-z_][A-Za-z0-9_]*)'`)

// withPrefix is the sorted, distinct words of all that start with prefix.
func withPrefix(all []string, prefix string) []string {
	var out []string
	for _, w := range all {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// commandNames are every name the terminal accepts: the table's names and
// aliases, and a front end's extra commands.
func (t *Terminal) commandNames() []string {
	var out []string
	for _, c := range Commands {
		out = append(out, c.Name)
		out = append(out, c.Aliases...)
	}
	if t.extra != nil {
		for _, h := range t.extra.Help {
			out = append(out, h.Name)
		}
	}
	return out
}

// localNames are the local names of the selected frame; with special,
// also __return__ or __exception__ where p answers them.
func (t *Terminal) localNames(special bool) []string {
	f, _, _, ok := t.frame()
	if !ok {
		return nil
	}
	var out []string
	for _, v := range f.Locals {
		out = append(out, v.Name)
	}
	if special && t.sel == 0 {
		switch f.Event {
		case tracer.EventReturn:
			out = append(out, "__return__")
		case tracer.EventException:
			out = append(out, "__exception__")
		}
	}
	return out
}

// displayedNames are the names displayed in the selected frame.
func (t *Terminal) displayedNames() []string {
	f, _, _, ok := t.frame()
	if !ok {
		return nil
	}
	var out []string
	for _, d := range t.displays[f.Frame] {
		out = append(out, d.name)
	}
	return out
}

// topLevelFunctions are the names of the functions src defines at its top
// level (those b FUNC accepts), from the program's index.
func topLevelFunctions(src string) []string {
	var out []string
	for _, s := range pysource.New(src).TopLevel(pysource.Function) {
		if s.Indent == 0 {
			out = append(out, s.Name)
		}
	}
	return out
}

// completer adapts Complete to readline: each candidate's rest after the
// word typed, followed by a space.
type completer struct{ t *Terminal }

var _ readline.AutoCompleter = completer{}

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	word, cands := c.t.complete(prefixAt(string(line), pos))
	out := make([][]rune, 0, len(cands))
	for _, s := range cands {
		out = append(out, []rune(s[len(word):]+" "))
	}
	return out, len([]rune(word))
}
