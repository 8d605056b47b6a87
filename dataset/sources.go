package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ndb/dataset/synth"
	"ndb/internal/paths"
	"ndb/tracer"
)

// Item is one program of a source, with a stable id.
type Item struct {
	ID      string // e.g. mbppplus/Mbpp_2/17, synth/1/42/3, dir/sub/a.py
	Program tracer.Program
}

// Source yields the programs of one data set. Program ids never change for
// the same data and seed.
type Source interface {
	// Name is the --source name (mbppplus, synthetic, a folder path).
	Name() string
	// Len is the number of items; -1 for an unbounded source.
	Len() int
	// Item returns item i (0 <= i < Len, or any i >= 0 when unbounded), or
	// the reason to skip it: SkipCruxEval or SkipNoInput.
	Item(i int) (it Item, skip string)
	// Dropped is how many programs a fixed list dropped at load time as
	// CruxEval duplicates (unbounded sources report theirs per item).
	Dropped() int
}

// Reasons for Source.Item to skip an item.
const (
	SkipCruxEval = "cruxeval" // duplicates a CruxEval function
	SkipNoInput  = "no-input" // the program has no such input
)

// DataDir resolves the shared data folder: the flag, else NDB_DATA_DIR, else
// ../shared/data relative to the repository root (the nearest folder above
// the working directory holding go.mod).
func DataDir(flag string) (string, error) {
	dir, err := paths.DataDir(flag)
	if err != nil {
		return "", fmt.Errorf("dataset: %w", err)
	}
	return dir, nil
}

// NormalizeCode collapses all white space runs to one space, for comparing
// programs with CruxEval's functions.
func NormalizeCode(code string) string { return strings.Join(strings.Fields(code), " ") }

// CruxEvalSet is the set of the 800 CruxEval functions, whitespace-normalized.
// It is read only to drop training programs that duplicate one of them.
type CruxEvalSet map[string]bool

// LoadCruxEval reads cruxeval.jsonl from dataDir.
func LoadCruxEval(dataDir string) (CruxEvalSet, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "cruxeval.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("dataset: CruxEval (needed for de-duplication): %w", err)
	}
	set := CruxEvalSet{}
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("dataset: cruxeval.jsonl line %d: %w", i+1, err)
		}
		set[NormalizeCode(rec.Code)] = true
	}
	return set, nil
}

// Contains reports whether code equals a CruxEval function up to white space.
func (c CruxEvalSet) Contains(code string) bool { return c[NormalizeCode(code)] }

// listSource is a fixed list of items, CruxEval duplicates already removed.
type listSource struct {
	name    string
	items   []Item
	dropped int
}

func (s *listSource) Name() string              { return s.name }
func (s *listSource) Len() int                  { return len(s.items) }
func (s *listSource) Item(i int) (Item, string) { return s.items[i], "" }
func (s *listSource) Dropped() int              { return s.dropped }
func (s *listSource) add(crux CruxEvalSet, it Item) {
	if crux.Contains(it.Program.Source) {
		s.dropped++
		return
	}
	s.items = append(s.items, it)
}

// dedupe removes items with the same program and call, keeping the first.
func (s *listSource) dedupe() {
	seen := map[string]bool{}
	out := s.items[:0]
	for _, it := range s.items {
		k := it.Program.Source + "\x00" + it.Program.Call
		if !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
	}
	s.items = out
}

// OpenSource opens a source by its --source name: synthetic, mbppplus,
// mbpp, humaneval, the file sources thealgorithms and realworld (each also
// -functions, -scripts; files.go), or a folder of .py scripts.
func OpenSource(name, dataDir string, seed int64) (Source, error) {
	crux, err := LoadCruxEval(dataDir)
	if err != nil {
		return nil, err
	}
	switch name {
	case "synthetic":
		return &synthSource{seed: seed, crux: crux, perFn: 4}, nil
	case "synthetic-scripts":
		return &synthScriptSource{seed: seed, crux: crux}, nil
	case "mbppplus":
		return loadMBPPPlus(filepath.Join(dataDir, "mbppplus.json"), crux)
	case "mbpp":
		return loadMBPP(dataDir, crux)
	case "humaneval":
		return loadHumanEval(filepath.Join(dataDir, "HumanEval.jsonl.gz"), crux)
	}
	if s, ok, err := openFileSource(name, dataDir, crux); ok {
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return loadDir(name, crux)
	}
	return nil, fmt.Errorf("dataset: unknown source %q (want synthetic, synthetic-scripts, mbppplus, mbpp, humaneval, thealgorithms, thealgorithms-functions, thealgorithms-scripts, realworld, realworld-functions, realworld-scripts or a folder)", name)
}

func loadMBPPPlus(path string, crux CruxEvalSet) (Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tasks []struct {
		TaskID    string          `json:"task_id"`
		Entry     string          `json:"entry_point"`
		Solution  string          `json:"canonical_solution"`
		BaseInput json.RawMessage `json:"base_input"`
		PlusInput json.RawMessage `json:"plus_input"`
	}
	if err := json.Unmarshal(sanitizeJSON(b), &tasks); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	s := &listSource{name: "mbppplus"}
	for _, t := range tasks {
		code := strings.TrimLeft(tracer.NormalizeNewlines(t.Solution), "\n")
		id := strings.ReplaceAll(t.TaskID, "/", "_")
		n := 0
		for _, raw := range []json.RawMessage{t.BaseInput, t.PlusInput} {
			inputs, err := pyArgLists(raw)
			if err != nil {
				return nil, fmt.Errorf("dataset: %s %s: %w", path, t.TaskID, err)
			}
			for _, args := range inputs {
				call := t.Entry + "(" + args + ")"
				s.add(crux, Item{ID: fmt.Sprintf("mbppplus/%s/%d", id, n),
					Program: tracer.Program{Path: t.TaskID, Source: code, Call: call}})
				n++
			}
		}
	}
	return s, nil
}

func loadMBPP(dataDir string, crux CruxEvalSet) (Source, error) {
	s := &listSource{name: "mbpp"}
	f, err := os.Open(filepath.Join(dataDir, "mbpp.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec struct {
			TaskID int      `json:"task_id"`
			Code   string   `json:"code"`
			Setup  string   `json:"test_setup_code"`
			Tests  []string `json:"test_list"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("dataset: mbpp.jsonl: %w", err)
		}
		code := joinCode(rec.Setup, rec.Code)
		addAssertCalls(s, crux, fmt.Sprintf("mbpp/%d", rec.TaskID), code, rec.Tests, "")
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "sanitized-mbpp.json"))
	if err != nil {
		return nil, err
	}
	var san []struct {
		TaskID  int      `json:"task_id"`
		Code    string   `json:"code"`
		Imports []string `json:"test_imports"`
		Tests   []string `json:"test_list"`
	}
	if err := json.Unmarshal(b, &san); err != nil {
		return nil, fmt.Errorf("dataset: sanitized-mbpp.json: %w", err)
	}
	for _, rec := range san {
		code := joinCode(strings.Join(rec.Imports, "\n"), rec.Code)
		addAssertCalls(s, crux, fmt.Sprintf("mbpp-sanitized/%d", rec.TaskID), code, rec.Tests, "")
	}
	s.dedupe()
	return s, nil
}

func loadHumanEval(path string, crux CruxEvalSet) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	s := &listSource{name: "humaneval"}
	dec := json.NewDecoder(zr)
	for dec.More() {
		var rec struct {
			TaskID   string `json:"task_id"`
			Prompt   string `json:"prompt"`
			Solution string `json:"canonical_solution"`
			Test     string `json:"test"`
			Entry    string `json:"entry_point"`
		}
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		code := tracer.NormalizeNewlines(rec.Prompt + rec.Solution)
		id := "humaneval/" + strings.TrimPrefix(rec.TaskID, "HumanEval/")
		addAssertCalls(s, crux, id, code, strings.Split(tracer.NormalizeNewlines(rec.Test), "\n"), rec.Entry)
	}
	return s, nil
}

// addAssertCalls adds one item per distinct entry call found in the assert
// lines. candidateFor renames HumanEval's candidate(...) to the entry point;
// otherwise the entry is the first function defined in code that the
// asserts call.
func addAssertCalls(s *listSource, crux CruxEvalSet, id, code string, lines []string, candidateFor string) {
	name := "candidate"
	if candidateFor == "" {
		name = ""
		for _, fn := range definedFunctions(code) {
			for _, l := range lines {
				if _, ok := extractCall(l, fn); ok {
					name = fn
					break
				}
			}
			if name != "" {
				break
			}
		}
		if name == "" {
			return
		}
	}
	n := 0
	seen := map[string]bool{}
	for _, l := range lines {
		if !strings.Contains(l, "assert") {
			continue
		}
		call, ok := extractCall(l, name)
		if !ok || !literalArgs(call[len(name):]) {
			continue
		}
		if candidateFor != "" {
			call = candidateFor + call[len(name):]
		}
		if seen[call] {
			continue
		}
		seen[call] = true
		s.add(crux, Item{ID: fmt.Sprintf("%s/%d", id, n), Program: tracer.Program{Path: id, Source: code, Call: call}})
		n++
	}
}

func loadDir(dir string, crux CruxEvalSet) (Source, error) {
	s := &listSource{name: dir}
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".py") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		s.add(crux, Item{ID: "dir/" + filepath.ToSlash(rel), Program: tracer.Program{Path: p, Source: tracer.NormalizeNewlines(string(b))}})
	}
	if len(s.items) == 0 && s.dropped == 0 {
		return nil, fmt.Errorf("dataset: no .py files under %s", dir)
	}
	return s, nil
}

// synthSource is the unbounded stream of synthetic programs: item i is call
// i%perFn of function i/perFn.
type synthSource struct {
	seed  int64
	perFn int
	crux  CruxEvalSet
}

func (s *synthSource) Name() string { return "synthetic" }
func (s *synthSource) Len() int     { return -1 }
func (s *synthSource) Dropped() int { return 0 }
func (s *synthSource) Item(i int) (Item, string) {
	fn, k := i/s.perFn, i%s.perFn
	progs := synth.Generate(s.seed, fn, s.perFn)
	if k >= len(progs) {
		return Item{}, SkipNoInput // the function has fewer distinct inputs
	}
	p := progs[k]
	if s.crux.Contains(p.Source) {
		return Item{}, SkipCruxEval
	}
	return Item{ID: fmt.Sprintf("synth/%d/%d/%d", s.seed, fn, k), Program: p}, ""
}

func joinCode(prefix, code string) string {
	code = tracer.NormalizeNewlines(code)
	if strings.TrimSpace(prefix) == "" {
		return code
	}
	return tracer.NormalizeNewlines(prefix) + "\n" + code
}
