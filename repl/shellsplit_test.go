package repl

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestShellSplit: run ARGS is split as pdb splits it (shlex.split),
// checked against python3's shlex on the same strings.
func TestShellSplit(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	cases := []string{`a b`, `  a   b  `, `'b c' d`, `"d\" e"`, `a\ b`, `x"y z"w`, `''`, `"a\\b" 'c\d'`, `"$x\n"`, `a	b`, "a\r\nb", ``}
	in, _ := json.Marshal(cases)
	out, err := exec.Command(python, "-c", "import json, shlex, sys\nprint(json.dumps([shlex.split(s) for s in json.loads(sys.argv[1])]))", string(in)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got, err := shellSplit(c)
		if err != nil || !slices.Equal(got, want[i]) {
			t.Errorf("shellSplit(%q) = %q, %v; shlex: %q", c, got, err, want[i])
		}
	}
	for _, bad := range []string{`'open`, `"open`, `end\`} {
		if _, err := shellSplit(bad); err == nil {
			t.Errorf("shellSplit(%q): no error", bad)
		}
	}
}

// FuzzShellSplit: any input splits or fails cleanly; without quotes or
// backslashes it is strings.Fields.
func FuzzShellSplit(f *testing.F) {
	for _, s := range []string{`a 'b c'`, `"x\"y"`, `\`, `''`, "a\tb\nc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := shellSplit(s)
		if !strings.ContainsAny(s, `'"\`) {
			want := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })
			if err != nil || !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("shellSplit(%q) = %q, %v; want %q", s, got, err, want)
			}
		}
	})
}
