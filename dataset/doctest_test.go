package dataset

import (
	"slices"
	"testing"
)

// TestStripMainBlockStatements: the main block is a statement of the
// program's index: text in a string (at any column) is never one, a string
// in the block that runs into column 0 is cut with it, its else clause too.
func TestStripMainBlockStatements(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"a guard's text in a string is kept",
			"DOC = \"\"\"\nif __name__ == \"__main__\":\n    main()\n\"\"\"\nx = 1\n",
			"DOC = \"\"\"\nif __name__ == \"__main__\":\n    main()\n\"\"\"\nx = 1\n"},
		{"a string in the block at column 0 is the block's",
			"x = 1\nif __name__ == \"__main__\":\n    print(\"\"\"\nhello\n\"\"\")\ny = 2\n",
			"x = 1\ny = 2\n"},
		{"the else clause goes with it",
			"x = 1\nif __name__ == \"__main__\":\n    main()\nelse:\n    lib()\ny = 2\n",
			"x = 1\ny = 2\n"},
		{"in parentheses, either way round",
			"x = 1\nif (\"__main__\" == __name__):\n    main()\n",
			"x = 1\n"},
		{"another test is kept",
			"if __name__ != \"__main__\":\n    lib()\n",
			"if __name__ != \"__main__\":\n    lib()\n"},
	}
	for _, c := range cases {
		if got := StripMainBlock(c.in); got != c.want {
			t.Errorf("%s: got %q want %q", c.name, got, c.want)
		}
	}
}

// TestDoctestCallScopes: a comprehension's target or a lambda's parameter
// is not a name of the code around it (Python 3: `f([k for k in x], k)`
// raises NameError for the second k), and an f-string's fields are code.
func TestDoctestCallScopes(t *testing.T) {
	mod := `X = [1]


def f(*a):
    """
    >>> f([k for k in X], k)
    >>> f(lambda v: v, v)
    >>> f([k for k in X])
    >>> f(f'{X}')
    >>> f(f'{undefined}')
    """
    return a
`
	want := []string{"f([k for k in X])", "f(f'{X}')"}
	if got := DoctestCalls(mod); !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
}
