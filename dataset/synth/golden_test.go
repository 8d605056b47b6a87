package synth

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden_seed1.txt")

// TestGolden pins the stream: program (seed, i) must stay the same text
// across runs, machines and Go versions, or resumed datasets would mix two
// generators. Change it on purpose only: go test -run TestGolden -update
func TestGolden(t *testing.T) {
	var b strings.Builder
	for i := range 6 {
		ps := Generate(1, i, 3)
		b.WriteString("### " + ps[0].Path + "\n" + ps[0].Source)
		for _, p := range ps {
			b.WriteString("# " + p.Call + "\n")
		}
	}
	const path = "testdata/golden_seed1.txt"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("stream for seed 1 changed; if on purpose, rerun with -update.\ngot:\n%s", got)
	}
}
