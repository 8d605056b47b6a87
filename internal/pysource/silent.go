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
