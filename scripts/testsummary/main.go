// Command testsummary reads `go test -json` on stdin and prints what CI needs
// to read: one line per package (as go test prints it), the output of every
// failed test, every skipped test with its reason, and a closing
// "tests: N passed, N failed, N skipped" line. It exits 1 when a test, a
// package or a build failed, so `go test -json ./... | go run
// ./scripts/testsummary` can stand for `go test ./...` in CI.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// maxKept bounds the output kept per test: enough for a failure's message.
const maxKept = 200

type summary struct {
	passed, failed, skipped int
	pkgFailed               bool
	output                  map[string][]string // package/test -> output lines so far
	skips                   []string            // "pkg TestX: reason"
}

func main() {
	s := &summary{output: map[string][]string{}}
	if err := s.read(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if s.print(os.Stdout) {
		os.Exit(1)
	}
}

func (s *summary) read(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not test2json: a build error or a crash; show it
			continue
		}
		s.add(e, w)
	}
	return sc.Err()
}

func (s *summary) add(e event, w io.Writer) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "output", "build-output":
		if e.Test == "" {
			// Package-level lines: go test's "ok"/"FAIL" summary, panics outside a test, build errors.
			if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") ||
				strings.HasPrefix(e.Output, "?") || e.Action == "build-output" || strings.HasPrefix(e.Output, "panic") {
				fmt.Fprint(w, e.Output)
			}
			return
		}
		if kept := s.output[key]; len(kept) < maxKept {
			s.output[key] = append(kept, e.Output)
		}
	case "pass":
		if e.Test != "" {
			s.passed++
			delete(s.output, key)
		}
	case "fail", "build-fail":
		if e.Test == "" {
			s.pkgFailed = true
			return
		}
		s.failed++
		fmt.Fprintf(w, "--- FAIL: %s %s\n", e.Package, e.Test)
		for _, l := range s.output[key] {
			fmt.Fprint(w, l)
		}
		delete(s.output, key)
	case "skip":
		if e.Test == "" {
			return // a package without tests
		}
		s.skipped++
		s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(s.output[key])))
		delete(s.output, key)
	}
}

// skipReason is what the test logged before "--- SKIP" (t.Skip's message),
// without go test's own framing lines.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " / ")
}

// print writes the skip list and the closing line; it reports whether the
// run failed.
func (s *summary) print(w io.Writer) bool {
	if len(s.skips) > 0 {
		sort.Strings(s.skips)
		fmt.Fprintf(w, "\nskipped tests (%d):\n", len(s.skips))
		for _, l := range s.skips {
			fmt.Fprintln(w, "  "+l)
		}
	}
	fmt.Fprintf(w, "\ntests: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return s.failed > 0 || s.pkgFailed
}
