package synth

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TestDump prints programs for eyeballing: SYNTH_DUMP=N go test -run TestDump -v
func TestDump(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("SYNTH_DUMP"))
	if err != nil || n <= 0 {
		t.Skip("set SYNTH_DUMP=N to print N programs")
	}
	start, _ := strconv.Atoi(os.Getenv("SYNTH_START"))
	for i := start; i < start+n; i++ {
		ps := Generate(1, i, 3)
		fmt.Printf("# ---- %s\n%s", ps[0].Path, ps[0].Source)
		for _, p := range ps {
			fmt.Printf("# %s\n", p.Call)
		}
	}
}
