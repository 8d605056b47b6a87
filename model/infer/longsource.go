package infer

import (
	"fmt"
	"slices"
	"strings"

	"ndb/format"
)

// A program longer than the context used to lose its beginning: the prompt
// was plainly left-truncated, so the model read the end of the source and
// the frames without the code the frame runs. elideSource instead keeps
// what the next frame needs and replaces every run of lines it leaves out
// by one comment that says so, indented like the first line it stands for:
//
//	def helper(x):
//	    # ... 14 lines ...
//
// The format carries no line numbers (a frame shows a line's text), so the
// count is there to say how much is missing, not to number lines; a comment
// is never an event's line, so the program rules (which read the whole
// program) never let a frame show it. What is kept, by priority, until the
// budget is spent (measured against left truncation in docs/inference.md,
// "Long programs"):
//
//  1. the running function (the block of the last frame's line; for a
//     call frame, the block it enters) with the headers of the blocks
//     around it and of the statements the line is nested in, its lines
//     nearest the current line first (after it forwards, before it for an
//     inverse prompt); at module level, the module's own lines nearest it;
//  2. the functions of the other frames still in the prompt, newest first
//     (the calls on the stack, and where the history has been), and the
//     block of a breakpoint's line;
//  3. the definitions their lines use: a def or class whose name they
//     read, a module-level import or assignment of a name they read;
//  4. the outline: every module-level import, every def and class header;
//  5. the rest, nearest the running function first;
//  6. comments and blank lines that fill a gap between kept lines.
//
// Steps 1 and 5 take statements only (a comment costs as much as the
// marker that replaces it), and step 1 at most half the budget.

// elisionMarker is the comment standing for n lines left out.
func elisionMarker(indent string, n int) string {
	if n == 1 {
		return indent + "# ... 1 line ..."
	}
	return fmt.Sprintf("%s# ... %d lines ...", indent, n)
}

// sourceView is what elideSource reads from a prompt.
type sourceView struct {
	src    string
	lines  []string
	sc     *scopeRules
	parent map[int]int   // block -> the block its header is in (-1: the module)
	header map[int][]int // block -> its header line and decorators
	names  map[string][]int
	cost   []int         // tokens of each line with its line break
	marker int           // tokens of a typical marker line
	blocks map[int][]int // block -> blockLines
}

// elideSource returns src cut to about budget tokens (each line's tokens
// counted with its line break) as the package comment above describes,
// for the prompt whose frames are tail (the text from the first
// <|frame_sep|> on). ok is false when even the running line and the
// markers do not fit.
func (p *Predictor) elideSource(src, tail string, budget int) (string, bool) {
	v := p.sourceView(src)
	keep := make([]bool, len(v.lines))
	used, runs := 0, 1 // tokens of the kept lines; runs of lines left out
	if len(v.lines) == 0 {
		runs = 0
	}
	set := func(j int, k bool) { // keep or drop line j, counting the runs
		out := func(i int) bool { return i >= 0 && i < len(keep) && !keep[i] }
		d := 0
		switch {
		case out(j-1) && out(j+1):
			d = 1 // a run split in two
		case !out(j-1) && !out(j+1):
			d = -1 // a run of one line gone
		}
		if !k {
			d = -d
		}
		keep[j], runs = k, runs+d
	}
	add := func(extra []int) bool {
		var fresh []int
		cost := 0
		for _, j := range extra {
			if !keep[j] {
				set(j, true)
				fresh = append(fresh, j)
				cost += v.cost[j]
			}
		}
		if used+cost+v.marker*runs <= budget {
			used += cost
			return true
		}
		for i := len(fresh) - 1; i >= 0; i-- {
			set(fresh[i], false)
		}
		return false
	}

	srcs, bp := tailLines(tail)
	backward := promptDirection(tail) == format.Backward
	var cur []int // the current line's candidates
	if len(srcs) > 0 {
		cur = v.linesOf(srcs[len(srcs)-1])
	}
	if len(cur) == 0 {
		cur = []int{v.firstModuleLine()}
	}
	// 1. The running function, nearest lines first; stop at the first line
	// that does not fit, so the window stays whole around the line.
	if !add(cur) {
		return "", false
	}
	// The window takes at most half the budget, so that the callers and
	// definitions get room; comments and blank lines come last (step 6).
	for _, j := range cur {
		b := v.innermost(j)
		if !add(append(v.headerChain(b), v.enclosing(j)...)) {
			break
		}
		for _, l := range v.byDistance(j, v.blockLines(b), backward) {
			if !executable(v.lines[l]) {
				continue
			}
			if used+v.cost[l] > budget/2 || !add([]int{l}) {
				break
			}
		}
	}
	// 2. The functions of the other frames, newest first, and a
	// breakpoint's block; each whole, else its header and the frame's line.
	var seen []int
	var later []string
	if bp != "" {
		later = append(later, bp)
	}
	for i := len(srcs) - 2; i >= 0; i-- {
		later = append(later, srcs[i])
	}
	for _, s := range later {
		for _, j := range v.linesOf(s) {
			b := v.innermost(j)
			if slices.Contains(seen, b) {
				add([]int{j})
				continue
			}
			seen = append(seen, b)
			if !add(append(v.headerChain(b), v.blockLines(b)...)) {
				add(append(append(v.headerChain(b), v.enclosing(j)...), j))
			}
		}
	}
	// 3. The definitions the kept lines use (twice: a helper's helper).
	for range 2 {
		words := map[string]bool{}
		for j, k := range keep {
			if k {
				for _, w := range v.sc.ix.NamesOn(j + 1) {
					words[w] = true
				}
			}
		}
		// the cheap lines first (headers, bindings), then whole bodies
		var blocks []int
		for _, w := range sortedKeys(words) {
			for _, j := range v.names[w] {
				if b := v.sc.opens[j]; b != noBlock {
					add(v.headerChain(b))
					blocks = append(blocks, b)
				} else {
					add(v.sc.statementLines(j))
				}
			}
		}
		for _, b := range blocks {
			add(v.blockLines(b))
		}
	}
	// 4. The outline: imports and every def and class header.
	for j := range v.lines {
		if kw := v.sc.ix.StatementKeyword(j + 1); v.sc.opens[j] != noBlock || (kw == "import" || kw == "from") && v.sc.ix.Owner(j+1) == v.sc.ix.Module {
			add(v.sc.statementLines(j))
		}
	}
	// 5. The rest, nearest the running function's header first (not the
	// line: then the cut program stays the same while the function runs,
	// and a session's prompt cache keeps it).
	all := make([]int, len(v.lines))
	for j := range all {
		all[j] = j
	}
	anchor := cur[0]
	if h := v.headerChain(v.innermost(cur[0])); len(h) > 0 {
		anchor = h[0]
	}
	for _, l := range v.byDistance(anchor, all, backward) {
		if executable(v.lines[l]) && !add([]int{l}) {
			break
		}
	}
	// 6. Comments and blank lines between kept lines, where they fit: a
	// gap of them costs a marker anyway.
	for j := 0; j < len(keep); {
		k := j
		for k < len(keep) && !keep[k] && !executable(v.lines[k]) {
			k++
		}
		if k > j && (k == len(keep) || keep[k]) && (j == 0 || keep[j-1]) {
			gap := make([]int, 0, k-j)
			for i := j; i < k; i++ {
				gap = append(gap, i)
			}
			add(gap)
		}
		j = k + 1
	}
	return v.render(keep), true
}

// sourceView returns src's view, made once per program: a session's
// prompts all start with the same program.
func (p *Predictor) sourceView(src string) *sourceView {
	p.viewMu.Lock()
	defer p.viewMu.Unlock()
	if p.view == nil || p.view.src != src {
		p.view = newSourceView(src, p)
	}
	return p.view
}

// newSourceView indexes src with the block reader of the program rules
// (programScopes) and the tokenizer's count of each line.
func newSourceView(src string, p *Predictor) *sourceView {
	v := &sourceView{src: src, lines: strings.Split(src, "\n"), sc: programScopes(nil, src),
		parent: map[int]int{}, header: map[int][]int{}, names: map[string][]int{}}
	v.cost = make([]int, len(v.lines))
	v.marker = len(p.tok.Encode(elisionMarker("    ", 12) + "\n"))
	for j, l := range v.lines {
		v.cost[j] = len(p.tok.Encode(l + "\n"))
		if b := v.sc.opens[j]; b != noBlock {
			v.header[b] = append(v.header[b], j)
			if f := v.sc.fns[b]; f.Line == j+1 { // the def or class line, not a decorator
				v.parent[b] = v.sc.blockOf(f.Parent)
				v.names[f.Name] = append(v.names[f.Name], j)
			}
			continue
		}
		// a module-level binding: an import's names, an assignment's,
		// for's or with's targets
		if v.sc.ix.Owner(j+1) == v.sc.ix.Module && indentWidth(l) == 0 {
			for _, w := range v.sc.ix.Binds(j + 1) {
				v.names[w] = append(v.names[w], j)
			}
		}
	}
	v.blockLines(-1) // build the index now: a view is shared read-only
	return v
}

// linesOf lists the lines whose text is s.
func (v *sourceView) linesOf(s string) []int {
	if !executable(s) {
		return nil
	}
	var out []int
	for j, l := range v.lines {
		if l == s {
			out = append(out, j)
		}
	}
	return out
}

// firstModuleLine is the module's first statement (a script's start).
func (v *sourceView) firstModuleLine() int {
	for j, l := range v.lines {
		if executable(l) && slices.Contains(v.sc.member[j], -1) {
			return j
		}
	}
	return 0
}

// innermost is the block line j runs in (-1: the module), or for a def or
// class header (a call frame's line) the block it opens.
func (v *sourceView) innermost(j int) int {
	if b := v.sc.opens[j]; b != noBlock {
		return b
	}
	m := v.sc.member[j]
	if len(m) == 0 { // blank or comment lines before the first statement
		return -1
	}
	return m[len(m)-1]
}

// headerChain lists the header lines (with decorators, and the lines a
// header goes on over) of block b and of the blocks around it.
func (v *sourceView) headerChain(b int) []int {
	var out []int
	for b >= 0 {
		for _, j := range v.header[b] {
			out = append(out, v.sc.statementLines(j)...) // a header may go on over lines
		}
		p, ok := v.parent[b]
		if !ok {
			break
		}
		b = p
	}
	return out
}

// enclosing lists the first lines of the statements line j is nested in
// (if, for, while, with, try, def, class: each earlier line with less
// indentation, innermost first), so that a line kept alone still reads
// under its `if __name__ == "__main__":` or loop.
func (v *sourceView) enclosing(j int) []int {
	var out []int
	ind := indentWidth(v.lines[j])
	for k := j - 1; k >= 0 && ind > 0; k-- {
		if l := v.lines[k]; executable(l) && indentWidth(l) < ind && !v.continues(k) {
			out = append(out, k)
			ind = indentWidth(l)
		}
	}
	return out
}

// continues reports whether line k continues a statement begun on an
// earlier line (inside brackets, a string or after a backslash).
func (v *sourceView) continues(k int) bool {
	return !v.sc.starts[k]
}

// blockLines lists the lines of block b and of the blocks inside it; for
// the module (-1), its own lines and the headers of its blocks.
func (v *sourceView) blockLines(b int) []int {
	if v.blocks == nil {
		v.blocks = map[int][]int{}
		for j := range v.lines {
			m := v.sc.member[j]
			if len(m) == 0 {
				m = []int{-1}
			}
			var in []int
			for _, s := range m {
				if s == -1 {
					in = append(in, -1)
				}
				for hops := 0; s >= 0 && hops <= len(v.lines); hops++ { // s and the blocks around it
					if !slices.Contains(in, s) {
						in = append(in, s)
					}
					p, ok := v.parent[s]
					if !ok {
						break
					}
					s = p
				}
			}
			if o := v.sc.opens[j]; o >= 0 && !slices.Contains(in, o) {
				in = append(in, o)
			}
			for _, s := range in {
				v.blocks[s] = append(v.blocks[s], j)
			}
		}
	}
	return v.blocks[b]
}

// byDistance orders lines by their distance from line j, a line after j
// before the line as far before it (a frame's next line follows it more
// often than not), or the other way round when backward (an inverse
// frame's line precedes it).
func (v *sourceView) byDistance(j int, lines []int, backward bool) []int {
	out := slices.Clone(lines)
	behind := func(a int) bool { return a < j != backward }
	slices.SortStableFunc(out, func(a, b int) int {
		da, db := 2*abs(a-j), 2*abs(b-j)
		if behind(a) {
			da++
		}
		if behind(b) {
			db++
		}
		return da - db
	})
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// render writes the kept lines and a marker for each run left out.
func (v *sourceView) render(keep []bool) string {
	var b strings.Builder
	for j := 0; j < len(v.lines); {
		if keep[j] {
			b.WriteString(v.lines[j])
			if j < len(v.lines)-1 {
				b.WriteByte('\n')
			}
			j++
			continue
		}
		k, indent := j, ""
		found := false
		for ; k < len(v.lines) && !keep[k]; k++ {
			if !found && strings.TrimSpace(v.lines[k]) != "" {
				l := v.lines[k]
				indent, found = l[:len(l)-len(strings.TrimLeft(l, " \t"))], true
			}
		}
		if k == len(v.lines) && strings.TrimSpace(strings.Join(v.lines[j:k], "")) == "" {
			// trailing blank lines (the source's final newline): nothing
			// is lost, so write them as they were
			b.WriteString(strings.Join(v.lines[j:k], "\n"))
			break
		}
		b.WriteString(elisionMarker(indent, k-j))
		if k < len(v.lines) {
			b.WriteByte('\n')
		}
		j = k
	}
	return b.String()
}

// tailLines reads the source lines of a prompt's frames (oldest first) and
// the line of its last action when that is a breakpoint.
func tailLines(tail string) (srcs []string, bp string) {
	for _, seg := range strings.Split(tail, format.TokFrameSep) {
		if i := strings.Index(seg, format.TokSrcSep); i >= 0 {
			s := seg[i+len(format.TokSrcSep):]
			if k := strings.Index(s, "<|"); k >= 0 {
				s = s[:k]
			}
			srcs = append(srcs, s)
		}
	}
	if _, _, step, err := lastStep(tail); err == nil && step.Src != "" {
		bp = step.Src
	}
	return srcs, bp
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
