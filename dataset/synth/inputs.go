package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// calls draws up to k distinct argument tuples for p as Python call
// expressions. It reads its own stream, so the first k calls do not depend on k.
func (p *program) calls(seed int64, i int, k int) []string {
	r := newRand(seed, i, 2)
	in := inputs{r: r, p: p}
	seen := map[string]bool{}
	var out []string
	for tries := 0; len(out) < k && tries < 20*k+20; tries++ {
		args := make([]string, len(p.params))
		for j, prm := range p.params {
			if j == p.recCounter {
				args[j] = fmt.Sprint(r.IntN(11))
				continue
			}
			args[j] = in.value(prm.t)
		}
		c := "f(" + strings.Join(args, ", ") + ")"
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// inputs draws argument values as Python literals. It mixes in the
// program's own literals so that lookups, finds and index() hit sometimes
// and miss sometimes.
type inputs struct {
	r *rand.Rand
	p *program
}

func (in inputs) chance(p float64) bool { return in.r.Float64() < p }

var (
	inWords   = []string{"hello", "world", "abc", "foo", "bar", "cat", "dog", "a", "xyz", "apple", "Hi", "test", "bb", "12", "code", "x", "Zed", "ok", "aaa", "the"}
	inLetters = "abcdexyzo"
	inMixed   = "aAbBcC1230 -_.!xyzQ"
)

func (in inputs) lit() (string, bool) {
	if len(in.p.strLits) == 0 {
		return "", false
	}
	return in.p.strLits[in.r.IntN(len(in.p.strLits))], true
}

func (in inputs) letters(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[in.r.IntN(len(alphabet))])
	}
	return b.String()
}

// str draws a string of at most about 14 characters.
func (in inputs) str() string {
	switch in.r.IntN(10) {
	case 0:
		if in.chance(0.5) {
			return ""
		}
		return in.letters(inLetters, 1)
	case 1, 2:
		return in.letters(inLetters, 1+in.r.IntN(9))
	case 3:
		n := 1 + in.r.IntN(3)
		ws := make([]string, n)
		for j := range ws {
			ws[j] = in.word()
		}
		return strings.Join(ws, oneOfR(in.r, " ", " ", ",", "-", ", "))
	case 4:
		s := in.letters("0123456789", 1+in.r.IntN(4))
		if in.chance(0.2) {
			s = "-" + s
		}
		return s
	case 5:
		return in.letters(inMixed, 1+in.r.IntN(10))
	case 6, 7:
		l, ok := in.lit()
		if !ok {
			return in.letters(inLetters, 2+in.r.IntN(6))
		}
		return in.letters(inLetters, in.r.IntN(4)) + l + in.letters(inLetters, in.r.IntN(4))
	case 8:
		w := in.word()
		return strings.ToUpper(w[:1]) + w[1:] + " " + in.word()
	default:
		return in.word()
	}
}

func (in inputs) word() string {
	if l, ok := in.lit(); ok && in.chance(0.3) && l != "" {
		return l
	}
	return inWords[in.r.IntN(len(inWords))]
}

func (in inputs) int() int {
	switch {
	case len(in.p.intLits) > 0 && in.chance(0.2):
		return in.p.intLits[in.r.IntN(len(in.p.intLits))] + in.r.IntN(3) - 1
	case in.chance(0.75):
		return in.r.IntN(16) - 3
	default:
		return in.r.IntN(81) - 20
	}
}

// value draws a Python literal of type t.
func (in inputs) value(t typ) string {
	switch t {
	case tInt:
		return fmt.Sprint(in.int())
	case tStr:
		return pyStr(in.str())
	case tBool:
		return oneOfR(in.r, "True", "False")
	case tListInt:
		n := in.r.IntN(8)
		xs := make([]string, n)
		for j := range xs {
			xs[j] = fmt.Sprint(in.int())
		}
		return "[" + strings.Join(xs, ", ") + "]"
	case tListStr:
		n := in.r.IntN(6)
		xs := make([]string, n)
		for j := range xs {
			if in.chance(0.3) {
				xs[j] = pyStr(in.letters(inLetters, 1))
			} else {
				xs[j] = pyStr(in.word())
			}
		}
		return "[" + strings.Join(xs, ", ") + "]"
	case tDict:
		n := in.r.IntN(5)
		seen := map[string]bool{}
		var kv []string
		for range n {
			k := in.word()
			if in.chance(0.3) {
				k = in.letters(inLetters, 1)
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			kv = append(kv, pyStr(k)+": "+fmt.Sprint(in.int()))
		}
		return "{" + strings.Join(kv, ", ") + "}"
	default:
		n := in.r.IntN(6)
		if n == 0 {
			return "set()"
		}
		seen := map[int]bool{}
		var xs []string
		for range n {
			x := in.int()
			if !seen[x] {
				seen[x] = true
				xs = append(xs, fmt.Sprint(x))
			}
		}
		return "{" + strings.Join(xs, ", ") + "}"
	}
}

func oneOfR[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }
