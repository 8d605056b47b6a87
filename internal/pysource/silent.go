package pysource

// Silent reports whether no event of any kind can be on line n under
// CPython 3.11, because no instruction of any code object is located
// there: a line no statement covers (blank, a comment), the inside of a
// multi-line string and its closing line when only brackets or commas follow
// it, a line of only closing brackets and commas, a string that continues
// an implicit concatenation, a function's docstring, an `else:` or
// `finally:` with its body below it, a `global` or `nonlocal` statement.
// It under-approximates: every token that may compile to an instruction
// makes its line not silent (a parameter's name, a constant folded into a
// tuple), and an f-string's lines are never silent (its fields are code).
//
// Why: pdb sets a breakpoint on any such line but never stops there; a
// model asked to run to one named a stop there (a docstring's line) where
// the real run goes to the end.
func (ix *Index) Silent(n int) bool {
	ix.silentOnce.Do(ix.readSilent)
	return n >= 1 && n <= len(ix.mayFire) && !ix.mayFire[n-1]
}

// readSilent marks, per line, whether a token on it may compile to an
// instruction.
func (ix *Index) readSilent() {
	ix.mayFire = make([]bool, len(ix.Lines))
	mark := func(first, last int) {
		for n := max(first, 1); n <= last && n <= len(ix.mayFire); n++ {
			ix.mayFire[n-1] = true
		}
	}
	docstring := map[int]bool{} // the logical lines that are a def's docstring
	seen := map[*Scope]bool{}
	for k, l := range ix.stmts {
		sc := ix.owner[k]
		if sc.Kind != Function || sc.oneLine || seen[sc] {
			continue
		}
		seen[sc] = true
		docstring[k] = ix.docstringOnly([]int{k}) && !hasFString(l.toks)
	}
	for k, l := range ix.stmts {
		if docstring[k] || noCode(l.toks) {
			continue
		}
		inString, fRun := false, false // the previous token is a string; its run of concatenated strings has an f-string
		for _, t := range l.toks {
			if t.field {
				continue
			}
			switch {
			case t.kind == tString && isFString(t):
				mark(t.line, t.end)
			case t.kind == tString && inString && !fRun:
				// one constant with the string before it, located where that one starts
			case t.kind == tString:
				mark(t.line, t.line)
			case t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ","):
			default:
				mark(t.line, t.end)
			}
			fRun = t.kind == tString && (fRun && inString || isFString(t))
			inString = t.kind == tString
		}
	}
}

// noCode reports whether a logical line compiles to no instruction: `else:`
// or `finally:` with the body on lines of its own, `global` or `nonlocal`
// names alone.
func noCode(toks []token) bool {
	if len(toks) == 0 {
		return true
	}
	switch toks[0].text {
	case "else", "finally":
		return len(toks) == 2 && toks[1].text == ":"
	case "global", "nonlocal":
		for _, t := range toks {
			if t.text == ";" {
				return false
			}
		}
		return toks[0].kind == tName
	}
	return false
}

func isFString(t token) bool {
	for i := 0; i < len(t.text) && t.text[i] != '\'' && t.text[i] != '"'; i++ {
		if t.text[i] == 'f' || t.text[i] == 'F' {
			return true
		}
	}
	return false
}

func hasFString(toks []token) bool {
	for _, t := range toks {
		if t.kind == tString && isFString(t) {
			return true
		}
	}
	return false
}

// Quiet reports whether no return or exception event can be on line n
// under CPython 3.11: its statement, on this one line, can neither raise
// nor end its frame there, and no other code object runs on it (a def's
// call event is still on its line). Such a
// statement is `pass`, `break`, `continue`, `try:`, a def header that
// evaluates nothing (no decorator, default or annotation) or NAME =
// LITERAL, in a module, a function or a class body without bases (a
// metaclass's namespace may refuse a name: an Enum's does), and its frame
// goes on to a line after it (NextLines: it is no last statement, where
// the frame returns).
//
// Why: a model stepping out of a frame named a def or an assignment in
// the middle of a module or class body as the line of its return.
func (ix *Index) Quiet(n int) bool {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return false
	}
	k := ix.stmtAt[n-1]
	l := ix.stmts[k]
	runs := ix.RunsOn(n)
	if l.first != n || l.last != n || len(runs) != 1 || runs[0] != ix.owner[k] || !plainNamespace(runs[0]) || !quietStatement(l.toks) ||
		k > 0 && ix.stmts[k-1].toks[0].text == "@" {
		return false
	}
	next := ix.NextLines(n)
	return len(next) > 0
}

// plainNamespace reports whether storing a name in scope s cannot fail:
// the module's and a function's can't; a class body's only when the class
// has no base (no metaclass to choose another namespace) and nothing else
// opens it.
func plainNamespace(s *Scope) bool {
	switch s.Kind {
	case Module, Function:
		return true
	case Class:
		return !s.open
	}
	return false
}

// quietStatement reports whether a one-line statement's tokens can neither
// raise nor return: see Quiet.
func quietStatement(toks []token) bool {
	switch first := toks[0]; {
	case len(toks) == 1 && first.kind == tName:
		return first.text == "pass" || first.text == "break" || first.text == "continue"
	case len(toks) == 2 && first.text == "try" && toks[1].text == ":":
		return true
	case first.text == "def" || first.text == "async" && len(toks) > 1 && toks[1].text == "def":
		if first.text == "async" {
			toks = toks[1:]
		}
		// def NAME ( names, * and / only ) :
		if len(toks) < 5 || toks[1].kind != tName || toks[2].text != "(" || toks[len(toks)-1].text != ":" || toks[len(toks)-2].text != ")" {
			return false
		}
		for _, t := range toks[3 : len(toks)-2] {
			if t.kind != tName && t.text != "," && t.text != "*" && t.text != "**" && t.text != "/" {
				return false
			}
		}
		return true
	case len(toks) >= 3 && first.kind == tName && !IsKeyword(first.text) && toks[1].text == "=":
		value := toks[2:]
		if len(value) == 2 && value[0].text == "-" {
			value = value[1:]
		}
		if len(value) != 1 {
			return false
		}
		v := value[0]
		return v.kind == tNumber || v.kind == tString && !isFString(v) || v.kind == tName && (v.text == "True" || v.text == "False" || v.text == "None")
	}
	return false
}
