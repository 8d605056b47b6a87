package synth

import (
	"fmt"
	"strings"
)

// Class shapes beyond compClass's first five, and the smaller non-class
// components (closures, lambdas, comprehensions, memoised recursion, while
// loops with break/continue, unpacking, string methods, global statements,
// default/keyword/*args/**kwargs). Each is bounded like the others: loops
// run over constant lists of at most 6 items or literal ranges, recursion is
// on small literals or short lists.

const nMoreClasses = 10

// classMore writes class shape k (0 <= k < nMoreClasses).
func (s *sgen) classMore(k int) {
	switch k {
	case 0: // value object with __add__, __eq__, __repr__
		cls := s.name("Vec", "Pair", "Delta", "Offset")
		fs := oneOf(s.gen, [2]string{"x", "y"}, [2]string{"a", "b"}, [2]string{"dx", "dy"}, [2]string{"lo", "hi"})
		a, b := fs[0], fs[1]
		lines := []string{fmt.Sprintf("class %s:", cls),
			fmt.Sprintf("    def __init__(self, %s, %s):", a, b),
			fmt.Sprintf("        self.%s = %s", a, a),
			fmt.Sprintf("        self.%s = %s", b, b),
			"    def __add__(self, other):",
			fmt.Sprintf("        return %s(self.%s + other.%s, self.%s + other.%s)", cls, a, a, b, b),
			"    def __eq__(self, other):",
			fmt.Sprintf("        return isinstance(other, %s) and (self.%s, self.%s) == (other.%s, other.%s)", cls, a, b, a, b)}
		mul := s.chance(0.4)
		if mul {
			lines = append(lines, "    def __mul__(self, k):", fmt.Sprintf("        return %s(self.%s * k, self.%s * k)", cls, a, b))
		}
		lines = append(lines, "    def __repr__(self):", fmt.Sprintf("        return f\"%s({self.%s}, {self.%s})\"", cls, a, b))
		s.def(lines...)
		s.feat.Dunder, s.feat.FString = true, true
		u, v := s.name("u", "first", "p1"), s.name("v", "second", "p2")
		s.say(fmt.Sprintf("%s = %s(%d, %d)", u, cls, s.r.IntN(9)-2, s.r.IntN(9)-2), fmt.Sprintf("%s = %s(%d, %d)", v, cls, s.r.IntN(9)-2, s.r.IntN(9)-2))
		if s.chance(0.5) {
			w := s.name("w", "total", "combined")
			s.say(fmt.Sprintf("%s = %s + %s", w, u, v), s.printf("sum", w), s.printf("same", fmt.Sprintf("%s == %s + %s", w, v, u)))
		} else {
			acc, p := s.name("acc", "running", "total"), s.name("step", "d", "item")
			s.say(fmt.Sprintf("%s = %s(0, 0)", acc, cls), fmt.Sprintf("for %s in [%s, %s, %s]:", p, u, v, u), fmt.Sprintf("    %s = %s + %s", acc, acc, p))
			s.say(s.printf("total", acc), s.printf("equal", fmt.Sprintf("%s == %s", u, v)))
		}
		if mul {
			s.say(fmt.Sprintf("print(%s * %d)", u, 2+s.r.IntN(3)))
		}
	case 1: // a container with __len__, __iter__, __getitem__, __contains__
		cls := s.name("Playlist", "Basket", "Queue", "Collection")
		it := oneOf(s.gen, "items", "songs", "entries", "_data")
		lines := []string{fmt.Sprintf("class %s:", cls),
			"    def __init__(self, name):",
			"        self.name = name",
			fmt.Sprintf("        self.%s = []", it),
			"    def add(self, item):",
			fmt.Sprintf("        self.%s.append(item)", it),
			"        return self",
			"    def __len__(self):",
			fmt.Sprintf("        return len(self.%s)", it)}
		if s.chance(0.5) {
			s.feat.Generator = true
			lines = append(lines, "    def __iter__(self):", fmt.Sprintf("        for item in self.%s:", it), "            yield item")
		} else {
			lines = append(lines, "    def __iter__(self):", fmt.Sprintf("        return iter(self.%s)", it))
		}
		lines = append(lines, "    def __getitem__(self, index):", fmt.Sprintf("        return self.%s[index]", it),
			"    def __contains__(self, item):", fmt.Sprintf("        return item in self.%s", it))
		s.def(lines...)
		s.feat.Dunder = true
		v, x := s.name("bag", "pl", "box", "coll"), s.name("w", "item", "thing")
		s.say(fmt.Sprintf("%s = %s(%s)", v, cls, pyStr(s.word())), fmt.Sprintf("for %s in %s:", x, s.aWordList()), fmt.Sprintf("    %s.add(%s)", v, x))
		s.say(s.printf("size", "len("+v+")", v+"[0]", v+"[-1]"))
		if s.chance(0.5) {
			i := s.name("i", "pos", "idx")
			s.say(fmt.Sprintf("for %s, %s in enumerate(%s, 1):", i, x, v), "    "+s.printf("at", i, x))
		} else {
			s.say(fmt.Sprintf("print(sorted(%s))", v))
		}
		s.say(fmt.Sprintf("print(%s in %s)", pyStr(s.word()), v))
	case 2: // a hand-written dataclass
		cls := s.name("Item", "Product", "Order", "Entry")
		n, p, q := oneOf(s.gen, "name", "label", "title"), oneOf(s.gen, "price", "cost", "weight"), oneOf(s.gen, "qty", "count", "units")
		s.def(fmt.Sprintf("class %s:", cls),
			fmt.Sprintf("    def __init__(self, %s, %s, %s=1):", n, p, q),
			fmt.Sprintf("        self.%s = %s", n, n),
			fmt.Sprintf("        self.%s = %s", p, p),
			fmt.Sprintf("        self.%s = %s", q, q),
			"    def __repr__(self):",
			fmt.Sprintf("        return f\"%s(%s={self.%s!r}, %s={self.%s}, %s={self.%s})\"", cls, n, n, p, p, q, q),
			"    def __eq__(self, other):",
			fmt.Sprintf("        return (self.%s, self.%s, self.%s) == (other.%s, other.%s, other.%s)", n, p, q, n, p, q),
			"    def total(self):",
			fmt.Sprintf("        return self.%s * self.%s", p, q))
		s.feat.Dunder, s.feat.FString, s.feat.Lambda = true, true, true
		xs := s.name("items", "cart", "orders", "lines")
		var objs []string
		first := ""
		for j := range 2 + s.r.IntN(3) {
			o := fmt.Sprintf("%s(%s, %d)", cls, pyStr(s.word()), 1+s.r.IntN(9))
			if s.chance(0.4) {
				o = fmt.Sprintf("%s(%s, %d, %s=%d)", cls, pyStr(s.word()), 1+s.r.IntN(9), q, 2+s.r.IntN(4))
			}
			if j == 0 {
				first = o
			}
			objs = append(objs, o)
		}
		s.say(fmt.Sprintf("%s = [%s]", xs, strings.Join(objs, ", ")))
		if s.chance(0.5) {
			s.say(fmt.Sprintf("%s.sort(key=lambda it: it.total())", xs))
		} else {
			c := s.name("cheapest", "smallest", "lightest")
			s.say(fmt.Sprintf("%s = min(%s, key=lambda it: it.%s)", c, xs, p), fmt.Sprintf("print(%s)", c))
		}
		t := s.name("grand_total", "total", "bill")
		s.say(fmt.Sprintf("%s = sum(it.total() for it in %s)", t, xs), s.printf("total", t))
		s.say(fmt.Sprintf("print(%s in %s, %s[0] == %s)", first, xs, xs, first))
	case 3: // inheritance with super().__init__ and overrides
		s.feat.Inherit = true
		if s.chance(0.5) {
			base, sub, sq := s.name("Shape", "Figure"), s.name("Rect", "Rectangle", "Box"), s.name("Square", "Tile")
			s.def(fmt.Sprintf("class %s:", base),
				"    def __init__(self, name):",
				"        self.name = name",
				"    def area(self):",
				"        return 0",
				"    def describe(self):",
				"        return f\"{self.name} with area {self.area()}\"")
			s.def(fmt.Sprintf("class %s(%s):", sub, base),
				"    def __init__(self, w, h):",
				fmt.Sprintf("        super().__init__(%s)", pyStr(strings.ToLower(sub))),
				"        self.w = w",
				"        self.h = h",
				"    def area(self):",
				"        return self.w * self.h")
			s.def(fmt.Sprintf("class %s(%s):", sq, sub),
				"    def __init__(self, side):",
				"        super().__init__(side, side)",
				fmt.Sprintf("        self.name = %s", pyStr(strings.ToLower(sq))))
			s.feat.FString = true
			xs, x := s.name("shapes", "figures", "parts"), s.name("sh", "shape", "fig")
			s.say(fmt.Sprintf("%s = [%s(%d, %d), %s(%d), %s(%s)]", xs, sub, 1+s.r.IntN(5), 1+s.r.IntN(5), sq, 1+s.r.IntN(4), base, pyStr(oneOf(s.gen, "dot", "point", "blob"))),
				fmt.Sprintf("for %s in %s:", x, xs), fmt.Sprintf("    print(%s.describe())", x))
			if s.chance(0.5) {
				big := s.name("big", "large", "wide")
				s.say(fmt.Sprintf("%s = [%s.name for %s in %s if %s.area() > %d]", big, x, x, xs, x, 2+s.r.IntN(8)), s.printf("big", big))
			} else {
				s.say(s.printf("is rect", fmt.Sprintf("isinstance(%s[1], %s)", xs, sub), fmt.Sprintf("isinstance(%s[2], %s)", xs, sub)))
			}
			return
		}
		base, d, c := s.name("Animal", "Pet"), s.name("Dog", "Puppy"), s.name("Cat", "Kitten")
		snd := oneOf(s.gen, "speak", "sound_off", "greet")
		s.def(fmt.Sprintf("class %s:", base),
			"    def __init__(self, name, sound=\"...\"):",
			"        self.name = name",
			"        self.sound = sound",
			fmt.Sprintf("    def %s(self):", snd),
			"        return f\"{self.name} says {self.sound}\"")
		s.def(fmt.Sprintf("class %s(%s):", d, base),
			"    def __init__(self, name):",
			"        super().__init__(name, \"woof\")",
			"        self.tricks = []",
			fmt.Sprintf("    def %s(self):", snd),
			fmt.Sprintf("        return super().%s() + \"!\" * (len(self.tricks) + 1)", snd))
		s.def(fmt.Sprintf("class %s(%s):", c, base),
			"    def __init__(self, name):",
			"        super().__init__(name, \"meow\")")
		s.feat.FString = true
		xs, x := s.name("pets", "animals", "zoo"), s.name("pet", "a", "animal")
		s.say(fmt.Sprintf("%s = [%s(%s), %s(%s), %s(%s)]", xs, d, pyStr(s.word()), c, pyStr(s.word()), base, pyStr(s.word())))
		for range s.r.IntN(3) {
			s.say(fmt.Sprintf("%s[0].tricks.append(%s)", xs, pyStr(oneOf(s.gen, "sit", "roll", "fetch", "beg"))))
		}
		s.say(fmt.Sprintf("for %s in %s:", x, xs), fmt.Sprintf("    print(%s.%s())", x, snd))
		if s.chance(0.5) {
			s.say(fmt.Sprintf("    if isinstance(%s, %s):", x, d), "        "+s.printf("tricks", x+".tricks"))
		}
	case 4: // class attribute counter and a @staticmethod
		cls := s.name("Ticket", "Badge", "Visitor", "Job")
		cnt := oneOf(s.gen, "count", "issued", "next_id", "created")
		st := oneOf(s.gen, "is_valid", "accepts", "allowed")
		s.def(fmt.Sprintf("class %s:", cls),
			fmt.Sprintf("    %s = 0", cnt),
			"    def __init__(self, owner):",
			fmt.Sprintf("        %s.%s += 1", cls, cnt),
			fmt.Sprintf("        self.id = %s.%s", cls, cnt),
			"        self.owner = owner",
			"    @staticmethod",
			fmt.Sprintf("    def %s(name):", st),
			fmt.Sprintf("        return %s", oneOf(s.gen, "name.isalpha() and len(name) <= 5", "len(name) > 2", "not name.startswith('x')")))
		s.feat.ClassMethod = true
		xs, w := s.name("tickets", "issued_list", "made"), s.name("who", "w", "owner")
		s.say(fmt.Sprintf("%s = []", xs), fmt.Sprintf("for %s in %s:", w, s.aWordList()), fmt.Sprintf("    if %s.%s(%s):", cls, st, w),
			fmt.Sprintf("        %s.append(%s(%s))", xs, cls, w))
		s.say(s.printf("made", cls+"."+cnt, fmt.Sprintf("[t.id for t in %s]", xs)))
	case 5: // a @classmethod alternative constructor
		s.feat.ClassMethod = true
		if s.chance(0.5) {
			cls := s.name("User", "Member", "Person", "Record")
			num := oneOf(s.gen, "age", "score", "level")
			s.def(fmt.Sprintf("class %s:", cls),
				fmt.Sprintf("    def __init__(self, name, %s):", num),
				"        self.name = name",
				fmt.Sprintf("        self.%s = %s", num, num),
				"    @classmethod",
				"    def from_string(cls, text):",
				fmt.Sprintf("        name, %s = text.split(\":\")", num),
				fmt.Sprintf("        return cls(name.strip(), int(%s))", num),
				"    @staticmethod",
				"    def is_high(value):",
				fmt.Sprintf("        return value >= %d", 10+s.r.IntN(20)))
			var recs []string
			for range 2 + s.r.IntN(3) {
				recs = append(recs, pyStr(fmt.Sprintf("%s%s:%d", s.word(), oneOf(s.gen, "", " "), s.r.IntN(50))))
			}
			rs, us, r := s.name("records", "rows", "raw"), s.name("users", "people", "members"), s.name("r", "row", "line")
			hi := s.name("high", "top", "picked")
			s.say(fmt.Sprintf("%s = [%s]", rs, strings.Join(recs, ", ")),
				fmt.Sprintf("%s = [%s.from_string(%s) for %s in %s]", us, cls, r, r, rs),
				fmt.Sprintf("%s = [u.name for u in %s if %s.is_high(u.%s)]", hi, us, cls, num), s.printf("high", hi))
			return
		}
		cls := s.name("Temperature", "Reading", "Celsius")
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self, degrees):",
			"        self.degrees = degrees",
			"    @classmethod",
			"    def from_fahrenheit(cls, f):",
			"        return cls((f - 32) * 5 // 9)",
			"    @staticmethod",
			"    def label(d):",
			"        return \"hot\" if d > 25 else \"mild\" if d > 10 else \"cold\"",
			"    def __repr__(self):",
			fmt.Sprintf("        return f\"%s({self.degrees})\"", cls))
		s.feat.Dunder, s.feat.FString = true, true
		x, t := s.name("f", "fahr", "deg"), s.name("t", "temp", "reading")
		s.say(fmt.Sprintf("for %s in %s:", x, s.intList(2, 4, 20, 100)), fmt.Sprintf("    %s = %s.from_fahrenheit(%s)", t, cls, x),
			"    "+s.printf("temp", t, fmt.Sprintf("%s.label(%s.degrees)", cls, t)))
	case 6: // a linked list walked by a loop or recursion
		cls := s.name("Node", "Link", "ListNode", "Cell")
		nx := oneOf(s.gen, "next", "nxt", "rest")
		s.def(fmt.Sprintf("class %s:", cls),
			fmt.Sprintf("    def __init__(self, value, %s=None):", nx),
			"        self.value = value",
			fmt.Sprintf("        self.%s = %s", nx, nx))
		var walk string
		if s.chance(0.5) {
			walk = s.name("to_list", "values_of", "collect")
			s.def(fmt.Sprintf("def %s(node):", walk), "    out = []", "    while node is not None:", "        out.append(node.value)",
				fmt.Sprintf("        node = node.%s", nx), "    return out")
		} else {
			s.feat.Recursive = true
			walk = s.name("total", "sum_nodes", "node_sum")
			s.def(fmt.Sprintf("def %s(node):", walk), "    if node is None:", "        return 0", fmt.Sprintf("    return node.value + %s(node.%s)", walk, nx))
		}
		h, x := s.name("head", "first", "chain"), s.name("x", "v", "value")
		s.say(fmt.Sprintf("%s = None", h), fmt.Sprintf("for %s in %s:", x, s.aNumList()), fmt.Sprintf("    %s = %s(%s, %s)", h, cls, x, h))
		s.say(s.printf(walk, walk+"("+h+")"))
		if s.chance(0.5) {
			s.feat.Unpack = true
			prev, cur := s.name("prev"), s.name("cur", "node")
			s.say(fmt.Sprintf("%s, %s = None, %s", prev, cur, h), fmt.Sprintf("while %s:", cur),
				fmt.Sprintf("    %s.%s, %s, %s = %s, %s, %s.%s", cur, nx, prev, cur, prev, cur, cur, nx),
				s.printf("reversed", walk+"("+prev+")"))
		}
	case 7: // a binary search tree
		cls := s.name("TreeNode", "BST", "Tree", "Branch")
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self, key):",
			"        self.key = key",
			"        self.left = None",
			"        self.right = None",
			"    def insert(self, key):",
			"        if key < self.key:",
			"            if self.left is None:",
			fmt.Sprintf("                self.left = %s(key)", cls),
			"            else:",
			"                self.left.insert(key)",
			"        elif key > self.key:",
			"            if self.right is None:",
			fmt.Sprintf("                self.right = %s(key)", cls),
			"            else:",
			"                self.right.insert(key)")
		s.feat.Recursive = true
		var walk string
		gen := false
		switch s.r.IntN(3) {
		case 0:
			walk = s.name("inorder", "in_order", "sorted_keys")
			s.def(fmt.Sprintf("def %s(node):", walk), "    if node is None:", "        return []",
				fmt.Sprintf("    return %s(node.left) + [node.key] + %s(node.right)", walk, walk))
		case 1:
			s.feat.Generator, gen = true, true
			walk = s.name("walk", "traverse", "keys")
			s.def(fmt.Sprintf("def %s(node):", walk), "    if node is not None:", fmt.Sprintf("        yield from %s(node.left)", walk),
				"        yield node.key", fmt.Sprintf("        yield from %s(node.right)", walk))
		default:
			walk = s.name("height", "depth")
			s.def(fmt.Sprintf("def %s(node):", walk), "    if node is None:", "        return 0",
				fmt.Sprintf("    return 1 + max(%s(node.left), %s(node.right))", walk, walk))
		}
		nums, root, x := s.aNumList(), s.name("root", "tree"), s.name("x", "key", "k")
		s.say(fmt.Sprintf("%s = %s(%s[0])", root, cls, nums), fmt.Sprintf("for %s in %s[1:]:", x, nums), fmt.Sprintf("    %s.insert(%s)", root, x))
		if gen {
			s.say(s.printf(walk, "list("+walk+"("+root+"))"))
		} else {
			s.say(s.printf(walk, walk+"("+root+")"))
		}
	case 8: // a context manager used with `with`
		cls := s.name("Section", "Logged", "Tracker", "Step")
		suppress := s.chance(0.5)
		ret := "False"
		if suppress {
			ret = "True"
		}
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self, name, log):",
			"        self.name = name",
			"        self.log = log",
			"    def __enter__(self):",
			"        self.log.append(\"enter \" + self.name)",
			"        return self",
			"    def __exit__(self, exc_type, exc, tb):",
			"        self.log.append(\"exit \" + self.name)",
			"        if exc_type is not None:",
			"            self.log.append(f\"saw {exc_type.__name__}\")",
			"        return "+ret)
		s.feat.With, s.feat.Dunder, s.feat.FString = true, true, true
		log, sec, t := s.name("log", "events", "trail"), s.name("sec", "step", "ctx"), s.name("total", "acc", "tally")
		nums := s.aNumList()
		s.say(fmt.Sprintf("%s = []", log))
		raise := s.chance(0.6)
		pre := ""
		if raise && !suppress {
			s.feat.Try = true
			s.say("try:")
			pre = "    "
		}
		s.say(pre+fmt.Sprintf("with %s(%s, %s) as %s:", cls, pyStr(s.word()), log, sec),
			pre+fmt.Sprintf("    %s = sum(%s)", t, nums), pre+fmt.Sprintf("    %s.log.append(f\"sum {%s}\")", sec, t))
		if raise {
			s.feat.Raise = true
			s.say(pre + fmt.Sprintf("    %s", oneOf(s.gen, "raise ValueError(\"stop here\")", "int(\"oops\")", fmt.Sprintf("%s[len(%s)]", nums, nums))))
			s.say(pre + fmt.Sprintf("    %s.log.append(\"unreachable\")", sec))
		}
		if raise && !suppress {
			s.say("except Exception as exc:", "    "+s.printf("caught", "exc"))
		}
		s.say(s.printf("log", log))
	default: // a custom exception class with an attribute
		cls := s.name("ValidationError", "BadRecord", "InvalidEntry", "CheckFailed")
		fld := oneOf(s.gen, "field", "key", "where")
		s.def(fmt.Sprintf("class %s(Exception):", cls),
			fmt.Sprintf("    def __init__(self, %s, message):", fld),
			"        super().__init__(message)",
			fmt.Sprintf("        self.%s = %s", fld, fld))
		val := s.name("validate", "check", "verify")
		lim := 1 + s.r.IntN(5)
		s.def(fmt.Sprintf("def %s(record):", val),
			"    if not record.get(\"name\"):",
			fmt.Sprintf("        raise %s(\"name\", \"missing name\")", cls),
			fmt.Sprintf("    if record.get(\"qty\", 0) < %d:", lim),
			fmt.Sprintf("        raise %s(\"qty\", f\"too few: {record['qty']}\")", cls),
			"    return record[\"name\"].title()")
		s.feat.Raise, s.feat.Try, s.feat.FString, s.feat.CustomExc = true, true, true, true
		var recs []string
		for range 2 + s.r.IntN(3) {
			recs = append(recs, fmt.Sprintf("{'name': %s, 'qty': %d}", pyStr(oneOf(s.gen, s.word(), s.word(), "")), s.r.IntN(8)))
		}
		rs, r, ok, e := s.name("records", "rows", "batch"), s.name("rec", "row", "r"), s.name("ok", "valid", "accepted"), s.name("e", "err", "problem")
		s.say(fmt.Sprintf("%s = [%s]", rs, strings.Join(recs, ", ")), fmt.Sprintf("%s = []", ok), fmt.Sprintf("for %s in %s:", r, rs),
			"    try:", fmt.Sprintf("        %s.append(%s(%s))", ok, val, r), fmt.Sprintf("    except %s as %s:", cls, e),
			"        "+s.printf("invalid", e+"."+fld, e))
		s.say(s.printf("valid", ok))
	}
}

// compClosure: nonlocal counters and function factories.
func (s *sgen) compClosure() {
	s.feat.Closure = true
	switch s.r.IntN(3) {
	case 0:
		mk := s.name("make_counter", "counter", "tally_maker")
		s.def(fmt.Sprintf("def %s(start=0):", mk), "    count = start", "    def step(by=1):", "        nonlocal count", "        count += by", "        return count", "    return step")
		c := s.name("tick", "next_id", "bump")
		s.say(fmt.Sprintf("%s = %s(%d)", c, mk, s.r.IntN(10)), fmt.Sprintf("for _ in range(%d):", 2+s.r.IntN(3)), fmt.Sprintf("    %s()", c))
		s.say(s.printf("count", fmt.Sprintf("%s(%d)", c, 1+s.r.IntN(5))))
	case 1:
		mk := s.name("make_multiplier", "scaler", "times")
		if s.chance(0.5) {
			s.feat.Lambda = true
			s.def(fmt.Sprintf("def %s(k):", mk), "    return lambda x: x * k")
		} else {
			s.def(fmt.Sprintf("def %s(k):", mk), "    def apply(x):", "        return x * k", "    return apply")
		}
		fs, g := s.name("funcs", "scalers", "ops"), s.name("g", "fn", "op")
		s.say(fmt.Sprintf("%s = [%s(k) for k in range(1, %d)]", fs, mk, 3+s.r.IntN(3)),
			fmt.Sprintf("print([%s(%d) for %s in %s])", g, 1+s.r.IntN(9), g, fs))
		s.feat.Print, s.feat.Comprehension = true, true
	default:
		mk := s.name("make_logger", "recorder", "make_history")
		s.def(fmt.Sprintf("def %s(prefix):", mk), "    seen = []", "    def log(msg):", "        seen.append(f\"{prefix}: {msg}\")", "        return len(seen)", "    return log, seen")
		s.feat.FString, s.feat.Unpack = true, true
		l, h, w := s.name("log", "record", "note"), s.name("history", "entries", "lines"), s.name("w", "word", "msg")
		s.say(fmt.Sprintf("%s, %s = %s(%s)", l, h, mk, pyStr(s.word())), fmt.Sprintf("for %s in %s:", w, s.aWordList()), fmt.Sprintf("    %s(%s)", l, w))
		s.say(s.printf("history", h))
	}
}

// compLambda: lambdas with sorted, map, filter.
func (s *sgen) compLambda() {
	s.feat.Lambda = true
	for _, c := range s.r.Perm(4)[:1+s.r.IntN(2)] {
		switch c {
		case 0:
			v := s.name("ordered", "by_len", "ranked")
			s.say(fmt.Sprintf("%s = sorted(%s, key=%s)", v, s.aWordList(), oneOf(s.gen, "lambda w: (len(w), w)", "lambda w: w[-1]", "lambda w: -len(w)", "str.lower")), s.printf("sorted", v))
		case 1:
			v := s.name("doubled", "scaled", "shifted")
			s.say(fmt.Sprintf("%s = list(map(lambda x: %s, %s))", v, oneOf(s.gen, "x * 2", "x + 1", "x * x", "abs(x - 5)"), s.aNumList()), s.printf("mapped", v))
		case 2:
			v := s.name("kept", "positives", "picked")
			s.say(fmt.Sprintf("%s = list(filter(lambda x: %s, %s))", v, oneOf(s.gen, "x > 3", "x % 2 == 1", "x != 0", "x >= 0"), s.aNumList()), s.printf("filtered", v))
		default:
			v := s.name("ranking", "leaders", "order")
			s.say(fmt.Sprintf("%s = sorted(%s.items(), key=lambda kv: kv[1], reverse=%s)", v, s.aDict(), oneOf(s.gen, "True", "False")), s.printf("ranking", v))
		}
	}
}

// compComprehension: list, dict, set, nested and filtered comprehensions.
func (s *sgen) compComprehension() {
	s.feat.Comprehension = true
	for _, c := range s.r.Perm(5)[:1+s.r.IntN(2)] {
		switch c {
		case 0:
			v := s.name("squares", "evens", "small")
			x := s.name("x", "n", "v")
			s.say(fmt.Sprintf("%s = [%s for %s in %s if %s]", v, oneOf(s.gen, x+" * "+x, x, x+" // 2"), x, s.aNumList(), oneOf(s.gen, x+" % 2 == 0", x+" > 2", x+" < 10")), s.printf("list", v))
		case 1:
			v := s.name("initials", "letters", "firsts")
			s.say(fmt.Sprintf("%s = {w[0] for w in %s}", v, s.aWordList()), s.printf("set", "sorted("+v+")"))
		case 2:
			v := s.name("grid", "matrix", "table")
			k := 2 + s.r.IntN(2)
			s.say(fmt.Sprintf("%s = [[i * j for j in range(%d)] for i in range(%d)]", v, k, k))
			if s.chance(0.5) {
				s.say(fmt.Sprintf("flat = [x for row in %s for x in row if x]", v), s.printf("flat", "flat"))
				s.used["flat"] = true
			} else {
				s.say(fmt.Sprintf("print([sum(row) for row in %s])", v))
			}
		case 3:
			v := s.name("lookup", "index", "by_name")
			s.say(fmt.Sprintf("%s = {w: i for i, w in enumerate(%s)}", v, s.aWordList()), s.printf("dict", v))
		default:
			v := s.name("labels", "tags", "marks")
			s.say(fmt.Sprintf("%s = [%s if x > %d else %s for x in %s]", v, pyStr("hi"), 2+s.r.IntN(8), pyStr("lo"), s.aNumList()), s.printf("labels", v))
		}
	}
}

// compMemo: recursion memoised in a dict.
func (s *sgen) compMemo() {
	s.feat.Memo, s.feat.Recursive = true, true
	f := s.name("fib_memo", "ways", "climb", "count_paths")
	c := s.name("cache", "memo", "seen_values")
	k := oneOf(s.gen, "", "2 * ")
	if s.chance(0.5) {
		s.def(fmt.Sprintf("%s = {}", c), fmt.Sprintf("def %s(n):", f), fmt.Sprintf("    if n in %s:", c), fmt.Sprintf("        return %s[n]", c),
			"    if n < 2:", "        return 1", fmt.Sprintf("    result = %s(n - 1) + %s%s(n - 2)", f, k, f), fmt.Sprintf("    %s[n] = result", c), "    return result")
	} else {
		s.def(fmt.Sprintf("def %s(n, %s=None):", f, c), fmt.Sprintf("    if %s is None:", c), fmt.Sprintf("        %s = {}", c), fmt.Sprintf("    if n in %s:", c),
			fmt.Sprintf("        return %s[n]", c), "    if n < 2:", "        return 1",
			fmt.Sprintf("    %s[n] = %s(n - 1, %s) + %s%s(n - 2, %s)", c, f, c, k, f, c), fmt.Sprintf("    return %s[n]", c))
	}
	n := 6 + s.r.IntN(8)
	v := s.name("answer", "result", "total")
	s.say(fmt.Sprintf("%s = %s(%d)", v, f, n), s.printf(f, v))
}

// compWhile: while loops with break and continue.
func (s *sgen) compWhile() {
	s.feat.While, s.feat.ModuleLoop = true, true
	i, t := s.name("i", "n", "step"), s.name("total", "acc", "kept")
	if s.chance(0.5) {
		s.say(fmt.Sprintf("%s = 0", i), fmt.Sprintf("%s = 0", t), "while True:", fmt.Sprintf("    %s += 1", i),
			fmt.Sprintf("    if %s %% %d == 0:", i, 2+s.r.IntN(2)), "        continue", fmt.Sprintf("    if %s > %d:", i, 5+s.r.IntN(8)), "        break",
			fmt.Sprintf("    %s += %s", t, i))
		s.say(s.printf("total", i, t))
		return
	}
	xs, x := s.aNumList(), s.name("x", "val", "item")
	found := s.name("found", "hit", "match")
	s.say(fmt.Sprintf("%s = 0", i), fmt.Sprintf("%s = None", found), fmt.Sprintf("while %s < len(%s):", i, xs), fmt.Sprintf("    %s = %s[%s]", x, xs, i),
		fmt.Sprintf("    %s += 1", i), fmt.Sprintf("    if %s < 0:", x), "        continue", fmt.Sprintf("    if %s > %d:", x, 5+s.r.IntN(10)),
		fmt.Sprintf("        %s = %s", found, x), "        break")
	if s.chance(0.4) {
		s.say("else:", "    "+s.printf("none found", i))
	}
	s.say(s.printf("found", found, i))
}

// compUnpack: tuple unpacking, swaps, star targets, enumerate and zip.
func (s *sgen) compUnpack() {
	s.feat.Unpack = true
	for _, c := range s.r.Perm(4)[:1+s.r.IntN(2)] {
		switch c {
		case 0:
			a, b := s.name("a", "left", "lo"), s.name("b", "right", "hi")
			s.say(fmt.Sprintf("%s, %s = %d, %d", a, b, s.r.IntN(20), s.r.IntN(20)), fmt.Sprintf("if %s > %s:", a, b), fmt.Sprintf("    %s, %s = %s, %s", a, b, b, a), s.printf("ordered", a, b))
		case 1:
			h, r := s.name("head", "first", "top"), s.name("rest", "others", "tail")
			s.say(fmt.Sprintf("%s, *%s = %s", h, r, s.aNumList()), s.printf("split", h, r))
		case 2:
			n, x := s.name("name", "who", "label"), s.name("score", "pts", "n")
			s.say(fmt.Sprintf("for %s, %s in zip(%s, %s):", n, x, s.aWordList(), s.aNumList()), "    "+s.printf("pair", n, x))
		default:
			q, r := s.name("q", "quot", "whole"), s.name("r", "rem", "left_over")
			s.say(fmt.Sprintf("%s, %s = divmod(%d, %d)", q, r, 10+s.r.IntN(90), 2+s.r.IntN(8)), s.printf("divmod", q, r))
			if s.chance(0.5) {
				i, w := s.name("i", "idx", "pos"), s.name("w", "word", "item")
				s.say(fmt.Sprintf("for %s, %s in enumerate(%s, start=%d):", i, w, s.aWordList(), s.r.IntN(2)), "    "+s.printf("item", i, w))
			}
		}
	}
}

// compStrings: split/join/strip/replace/find/format and friends.
func (s *sgen) compStrings() {
	s.feat.StrMethods = true
	var ws []string
	for range 3 + s.r.IntN(3) {
		ws = append(ws, s.word())
	}
	raw := s.name("raw", "line", "record", "row")
	sep := oneOf(s.gen, ",", ";", "|")
	pad := oneOf(s.gen, "", " ", "  ")
	s.say(fmt.Sprintf("%s = %s", raw, pyStr(pad+strings.Join(ws, sep+oneOf(s.gen, "", " "))+pad)))
	fs := s.name("fields", "cols", "parts")
	s.say(fmt.Sprintf("%s = [f.strip() for f in %s.split(%s)]", fs, raw, pyStr(sep)))
	for _, c := range s.r.Perm(5)[:2+s.r.IntN(2)] {
		switch c {
		case 0:
			v := s.name("joined", "csv", "out")
			s.say(fmt.Sprintf("%s = %s.join(%s)", v, pyStr(oneOf(s.gen, "-", " / ", ", ")), fs), s.printf("joined", v))
		case 1:
			v := s.name("cleaned", "fixed", "swapped")
			s.say(fmt.Sprintf("%s = %s.replace(%s, %s).upper()", v, raw, pyStr(sep), pyStr(oneOf(s.gen, " ", "+", ""))), s.printf("cleaned", v))
		case 2:
			p := s.name("pos", "where", "at")
			w := oneOf(s.gen, ws[s.r.IntN(len(ws))], s.word())
			s.say(fmt.Sprintf("%s = %s.find(%s)", p, raw, pyStr(w)), fmt.Sprintf("if %s >= 0:", p), "    "+s.printf("found at", p), "else:", fmt.Sprintf("    print(%s, %s)", pyStr("not found:"), pyStr(w)))
		case 3:
			s.say(fmt.Sprintf("print(%s.format(len(%s), %s[0]))", pyStr(oneOf(s.gen, "{} fields, first {}", "count={0} head={1!r}", "{:>3} | {}")), fs, fs))
			s.feat.Print = true
		default:
			x := s.name("f", "field", "col")
			s.say(fmt.Sprintf("for %s in %s:", x, fs), fmt.Sprintf("    if %s.startswith(%s) or %s.endswith(%s):", x, pyStr(oneOf(s.gen, "a", "b", "m", "r")), x, pyStr(oneOf(s.gen, "a", "e", "n"))),
				"        "+s.printf("match", x, fmt.Sprintf("%s.count(%s)", x, pyStr(oneOf(s.gen, "a", "e", "o")))))
		}
	}
}

// compGlobal: a function updating module state through `global`.
func (s *sgen) compGlobal() {
	s.feat.Global = true
	g := s.name("total_calls", "counter", "hits", "running_total")
	f := s.name("record", "track", "bump_total", "register")
	src, inc := s.aNumList(), oneOf(s.gen, "value", "1", "abs(value)")
	if s.chance(0.5) {
		src, inc = s.aWordList(), oneOf(s.gen, "len(value)", "1", "value.count('a')")
	}
	s.def(fmt.Sprintf("%s = 0", g), fmt.Sprintf("def %s(value):", f), fmt.Sprintf("    global %s", g), fmt.Sprintf("    %s += %s", g, inc), fmt.Sprintf("    return %s", g))
	x := s.name("x", "v", "item")
	s.say(fmt.Sprintf("for %s in %s:", x, src), fmt.Sprintf("    %s(%s)", f, x))
	s.say(s.printf("after", g))
}

// compArgs: defaults, keyword arguments, *args and **kwargs.
func (s *sgen) compArgs() {
	s.feat.VarArgs = true
	switch s.r.IntN(3) {
	case 0:
		f := s.name("total_of_all", "add_all", "combine")
		s.def(fmt.Sprintf("def %s(*values, scale=1):", f), "    return sum(values) * scale")
		s.say(s.printf("sum", fmt.Sprintf("%s(%d, %d, %d)", f, s.r.IntN(9), s.r.IntN(9), s.r.IntN(9)), fmt.Sprintf("%s(*%s, scale=%d)", f, s.aNumList(), 2+s.r.IntN(3))))
	case 1:
		f := s.name("build_tag", "make_label", "describe")
		s.def(fmt.Sprintf("def %s(name, *parts, sep=%s, **attrs):", f, pyStr(oneOf(s.gen, "-", ":", "/"))),
			"    head = sep.join([name, *parts])",
			"    extra = \" \".join(f\"{k}={v}\" for k, v in sorted(attrs.items()))",
			"    return head + (\" \" + extra if extra else \"\")")
		s.feat.FString = true
		s.say(fmt.Sprintf("print(%s(%s, %s))", f, pyStr(s.word()), pyStr(s.word())),
			fmt.Sprintf("print(%s(%s, sep=%s, %s=%d))", f, pyStr(s.word()), pyStr(oneOf(s.gen, ".", "+")), oneOf(s.gen, "size", "color", "level"), s.r.IntN(9)))
		s.feat.Print = true
	default:
		f := s.name("greet", "format_entry", "announce")
		s.def(fmt.Sprintf("def %s(name, greeting=%s, punct=%s):", f, pyStr(oneOf(s.gen, "hello", "hi", "hey")), pyStr(oneOf(s.gen, "!", ".", "?"))),
			"    return f\"{greeting}, {name}{punct}\"")
		s.feat.FString = true
		opts := s.name("options", "kw", "settings")
		s.say(fmt.Sprintf("print(%s(%s))", f, pyStr(s.word())), fmt.Sprintf("print(%s(%s, punct=%s))", f, pyStr(s.word()), pyStr("...")),
			fmt.Sprintf("%s = {%s: %s}", opts, pyStr("greeting"), pyStr(oneOf(s.gen, "yo", "welcome", "bye"))), fmt.Sprintf("print(%s(%s, **%s))", f, pyStr(s.word()), opts))
		s.feat.Print = true
	}
}
