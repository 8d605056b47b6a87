package main

import (
	"strings"
	"testing"
)

// A stream as `go test -json` writes it: a pass, a skip with its reason, a
// failure with its message, and a package that failed to build.
const stream = `{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"a","Test":"TestNoData"}
{"Action":"output","Package":"a","Test":"TestNoData","Output":"=== RUN   TestNoData\n"}
{"Action":"output","Package":"a","Test":"TestNoData","Output":"    x_test.go:9: no shared data in ../shared/data\n"}
{"Action":"output","Package":"a","Test":"TestNoData","Output":"--- SKIP: TestNoData (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestNoData","Elapsed":0}
{"Action":"run","Package":"a","Test":"TestBad"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"    x_test.go:12: got 2, want 3\n"}
{"Action":"fail","Package":"a","Test":"TestBad","Elapsed":0}
{"Action":"output","Package":"a","Output":"FAIL\ta\t0.01s\n"}
{"Action":"fail","Package":"a","Elapsed":0.01}
# b
b/b.go:3:1: syntax error
{"Action":"skip","Package":"c","Elapsed":0}
`

func TestSummary(t *testing.T) {
	s := &summary{output: map[string][]string{}}
	var out strings.Builder
	if err := s.read(strings.NewReader(stream), &out); err != nil {
		t.Fatal(err)
	}
	failed := s.print(&out)
	got := out.String()
	for _, want := range []string{
		"--- FAIL: a TestBad\n    x_test.go:12: got 2, want 3\n",
		"FAIL\ta\t0.01s\n",
		"b/b.go:3:1: syntax error\n",
		"skipped tests (1):\n  a TestNoData: x_test.go:9: no shared data in ../shared/data\n",
		"tests: 1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !failed {
		t.Error("a failed test did not fail the run")
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("framing lines leaked:\n%s", got)
	}
}

func TestSummaryPassingRun(t *testing.T) {
	s := &summary{output: map[string][]string{}}
	var out strings.Builder
	s.read(strings.NewReader("{\"Action\":\"pass\",\"Package\":\"a\",\"Test\":\"T\"}\n{\"Action\":\"pass\",\"Package\":\"a\"}\n"), &out)
	if s.print(&out) {
		t.Errorf("a passing run failed:\n%s", out.String())
	}
}
