package debugger

import "testing"

// TestFunctionLine: a function breakpoint's line (DAP's and MCP's) is pdb's for `b FUNC`
// once the function is defined: the def, or its first decorator.
func TestFunctionLine(t *testing.T) {
	src := `import os


def plain(x):
    return x


async def coro(a,
               b):  # a comment: with a colon
    # a comment
    """A docstring
    on two lines."""

    y = a + b
    return y


class C:
    def method(self):
        'one-line docstring'
        return 1


def one(): return 1


@staticmethod
@other
def decorated():
    pass


class D:
    @property
    def method(self):
        return 2
`
	for _, c := range []struct {
		name string
		want int
	}{{"plain", 4}, {"coro", 8}, {"C.method", 19}, {"method", 19}, {"D.method", 34}, {"one", 24},
		{"decorated", 27}, {"E.method", 0}, {"nope", 0}, {"os.path", 0}, {"", 0}, {"a b", 0}} {
		if got := FunctionLine(src, c.name); got != c.want {
			t.Errorf("FunctionLine(%q) = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestFunctionLineSkipsStringsAndComments: a def inside a string or a
// comment is no function, a def whose header goes on over several lines
// is (the regular expressions before the index matched the first and
// missed none of these by luck only), and a nested class's method is
// found by its qualified name, as pdb's `b Outer.Inner.m` evaluates it.
func TestFunctionLineSkipsStringsAndComments(t *testing.T) {
	src := `DOC = """
def ghost(x):
    return x
"""
# def phantom():


def real(
        x):
    return x


class Outer:
    class Inner:
        def m(self):
            return 1


def ghost_caller():
    return "def ghost():"
`
	for _, c := range []struct {
		name string
		want int
	}{{"ghost", 0}, {"phantom", 0}, {"real", 8}, {"Outer.Inner.m", 15}, {"Inner.m", 15}, {"m", 15}, {"Outer.m", 0}} {
		if got := FunctionLine(src, c.name); got != c.want {
			t.Errorf("FunctionLine(%q) = %d, want %d", c.name, got, c.want)
		}
	}
}
