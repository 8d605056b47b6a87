package pysource

import (
	_ "embed"
	"strings"
	"sync"
)

// stdlibTable is what the tracer shows, under Python 3.11, for the public
// names of the standard-library modules programs most often import from:
// "module.name<TAB>repr" lines, written by stdlib/reprs.py (its doc says
// which values are kept).
//
//go:embed stdlib/reprs.tsv
var stdlibTable string

var stdlibReprs = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdlibTable), "\n") {
		if name, repr, ok := strings.Cut(line, "\t"); ok {
			out[name] = repr
		}
	}
	return out
})

// StdlibRepr is the text the tracer shows for the value of a
// standard-library module's name ("math.log10": "<built-in function
// log10>"), under Python 3.11; false for a name the table does not hold.
func StdlibRepr(qualified string) (string, bool) {
	r, ok := stdlibReprs()[qualified]
	return r, ok
}
