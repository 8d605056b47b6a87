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
