// Package layout holds one test: the rooms of docs/architecture.md import
// only the rooms below them, so a front end that reaches into an engine, or
// a core package that reaches up, fails CI instead of drifting.
package layout

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ndb/internal/paths"
)

// allowed lists, per package folder, the ndb packages its non-test files
// may import (a prefix allows its subpackages; internal/ is always allowed).
var allowed = map[string][]string{
	"tracer":          {},
	"debugger":        {"tracer"},
	"format":          {"debugger", "tracer"},
	"repl":            {"debugger", "tracer"},
	"dap":             {"debugger", "tracer"},
	"mcp":             {"debugger", "tracer"},
	"model/nn":        {},
	"model/tokenizer": {},
	"model/modelfile": {"model/nn", "model/tokenizer"},
	"model/train":     {"format", "model/modelfile", "model/nn", "model/tokenizer"},
	"model/infer":     {"debugger", "format", "model/defaultmodel", "model/modelfile", "model/nn", "model/tokenizer"},
	"engine":          {"debugger", "engine/openai", "format", "model/defaultmodel", "model/infer", "tracer"},
	"dataset":         {"dataset/synth", "debugger", "format", "tracer"},
	"eval":            {"dataset", "debugger", "engine", "format", "model/train", "tracer"},
}

func TestImportsGoDown(t *testing.T) {
	root, err := paths.RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	for dir, ok := range allowed {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v): is the table out of date?", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			imports, err := ndbImports(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range imports {
				if !importAllowed(imp, ok) {
					rel, _ := filepath.Rel(root, f)
					t.Errorf("%s imports ndb/%s: %s may import only %v and internal/ (docs/architecture.md)", rel, imp, dir, ok)
				}
			}
		}
	}
}

func importAllowed(imp string, ok []string) bool {
	return strings.HasPrefix(imp, "internal/") || slices.ContainsFunc(ok, func(p string) bool {
		return imp == p || strings.HasPrefix(imp, p+"/")
	})
}

// ndbImports returns the module's packages file imports, without "ndb/".
func ndbImports(file string) ([]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return nil, err
		}
		if rest, ok := strings.CutPrefix(p, "ndb/"); ok {
			out = append(out, rest)
		}
	}
	return out, nil
}

func TestImportAllowed(t *testing.T) {
	for _, c := range []struct {
		imp  string
		ok   []string
		want bool
	}{
		{"engine", []string{"debugger", "tracer"}, false},
		{"debugger", []string{"debugger", "tracer"}, true},
		{"engine/openai", []string{"engine"}, true},
		{"enginex", []string{"engine"}, false},
		{"internal/termsafe", nil, true},
		{"model/infer", []string{"model/nn"}, false},
	} {
		if got := importAllowed(c.imp, c.ok); got != c.want {
			t.Errorf("importAllowed(%q, %v) = %v, want %v", c.imp, c.ok, got, c.want)
		}
	}
}
