package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ndb/tracer"
)

// File sources: a folder of real-world, stdlib-only Python files
// (<datadir>/thealgorithms/, <datadir>/realworld/), one file per name,
// read in name order. Two kinds of units per file:
//
//   - function units, one per distinct doctest call of the file (`>>> f(1, 2)`,
//     `>>> Cls(3).method(4)`, continuation `...` lines joined; DoctestCalls),
//     traced as a call on the file with its `if __name__ == "__main__":`
//     block removed (the tracer runs every program as module __main__, so the
//     block would otherwise run at import); ID PREFIX/<stem>/<n>;
//   - script units, the whole file traced as a script (its main block runs),
//     ID PREFIX/<stem>.
//
// model/train.SplitKey strips the trailing number, so both kinds of one file
// share the split key PREFIX/<stem>: a file is held out whole.

// FileMaxSource drops units whose traced program (the source, plus the main
// wrapper for a call) is longer than this many characters: about 2,000
// tokens, the longest context of the base model, so the program alone would
// not fit a training window. Measured: 614 of TheAlgorithms' 639 files are
// at most 8,000 bytes.
const FileMaxSource = 8000

// Reasons a file source's trace is dropped (TraceFilter).
const (
	SkipOutOfBounds = "out-of-bounds" // the run hit the event, time, memory or size limit (exit never)
	SkipScriptError = "script-error"  // a script unit ended in an uncaught exception (it fails as a script)
)

// TraceFilter is implemented by sources whose traces must pass a check
// before trajectories are sampled from them: DropTrace returns the skip
// reason, or "" to keep the trace. Job.doUnit calls it right after the
// trace; `ndb eval` applies it to the held-out programs.
type TraceFilter interface {
	DropTrace(it Item, t *tracer.Trace) string
}

// fileSource is a listSource of file units with the file sources' trace
// filter and counts.
type fileSource struct {
	listSource
	files              int // .py files read
	functions, scripts int // units of each kind after the drops
	tooLong            int // units dropped as longer than FileMaxSource
}

// DropTrace drops runs that left the bounds: exit never (events, timeout,
// memory, trace size: real code that runs long is not an infinite loop, and
// its "never" would teach the wrong exit), and script units that end in an
// error (a file that fails as a script fails at import: missing file,
// module, argument). A call unit's exception is data (doctests test
// raising calls); a call whose module fails at import has no states and is
// already skipped as trace-error.
func (s *fileSource) DropTrace(it Item, t *tracer.Trace) string {
	return FileDropTrace(it, t)
}

// FileDropTrace is the file sources' trace rule (see fileSource.DropTrace).
func FileDropTrace(it Item, t *tracer.Trace) string {
	if t == nil || len(t.States) == 0 {
		return "trace-error"
	}
	switch t.Exit.Kind {
	case tracer.ExitNever:
		return SkipOutOfBounds
	case tracer.ExitError:
		if strings.TrimSpace(it.Program.Call) == "" {
			return SkipScriptError
		}
	}
	return ""
}

// Counts returns the function and script units the source holds, and the
// units dropped as too long.
func (s *fileSource) Counts() (functions, scripts, tooLong int) {
	return s.functions, s.scripts, s.tooLong
}

// Files is the number of .py files read.
func (s *fileSource) Files() int { return s.files }

// fileKinds are the three --source names of one file source: both kinds,
// function units only, script units only.
type fileKinds struct {
	all, functions, scripts string
	folder                  string // under the data folder
}

// fileSources lists the file sources (thealgorithms.go, realworld.go).
var fileSources = []fileKinds{
	{SourceTheAlgorithms, SourceTheAlgorithmsFunctions, SourceTheAlgorithmsScripts, "thealgorithms"},
	{SourceRealWorld, SourceRealWorldFunctions, SourceRealWorldScripts, "realworld"},
}

// openFileSource opens name when it is one of fileSources' names.
func openFileSource(name, dataDir string, crux CruxEvalSet) (Source, bool, error) {
	for _, k := range fileSources {
		if name == k.all || name == k.functions || name == k.scripts {
			s, err := loadFiles(name, k.all, filepath.Join(dataDir, k.folder), crux, name != k.scripts, name != k.functions)
			return s, true, err
		}
	}
	return nil, false, nil
}

// loadFiles reads every .py file of dir (sorted by name) and builds the
// function units, the script units or both, file by file (a file's
// function units, then its script unit), with ids under prefix.
func loadFiles(name, prefix, dir string, crux CruxEvalSet, functions, scripts bool) (*fileSource, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", name, err)
	}
	var files []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".py") {
			files = append(files, e.Name())
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("dataset: no .py files under %s", dir)
	}
	sort.Strings(files)
	s := &fileSource{listSource: listSource{name: name}, files: len(files)}
	add := func(it Item, fn bool) {
		if len(tracer.TracedSource(it.Program)) > FileMaxSource {
			s.tooLong++
			return
		}
		before := len(s.items)
		s.add(crux, it)
		if len(s.items) > before {
			if fn {
				s.functions++
			} else {
				s.scripts++
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		code := tracer.NormalizeNewlines(string(b))
		stem := strings.TrimSuffix(f, ".py")
		path := filepath.Join(dir, f)
		if functions {
			lib := StripMainBlock(code)
			for n, call := range DoctestCalls(code) {
				add(Item{ID: fmt.Sprintf("%s/%s/%d", prefix, stem, n),
					Program: tracer.Program{Path: path, Source: lib, Call: call}}, true)
			}
		}
		if scripts {
			add(Item{ID: prefix + "/" + stem, Program: tracer.Program{Path: path, Source: code}}, false)
		}
	}
	return s, nil
}
