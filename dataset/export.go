package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"ndb/format"
)

// Example is one next-state example in the prompt/completion JSONL that
// fine-tuning tools read: the trajectory cut right after an action, and the
// frame the model must write next (SPEC section 6).
type Example struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
	Action     string `json:"action"`
	Direction  string `json:"direction"`
	ProgramID  string `json:"program_id"`
	Unit       int    `json:"unit"`
	Index      int    `json:"index"`
	Cut        int    `json:"cut"` // the step after which the prompt ends
}

// CutPoints lists the steps of t after which a next-state example may cut,
// by action: every step qualifies (its next frame, an exit included, is the
// completion).
func CutPoints(t *format.Trajectory) map[string][]int {
	out := map[string][]int{}
	for k, s := range t.Steps {
		out[string(s.Action)] = append(out[string(s.Action)], k)
	}
	return out
}

// ExportStats counts what Export wrote.
type ExportStats struct {
	Trajectories int
	Examples     int
	ByAction     map[string]int
}

// Export reads the shards of a gen output folder in order and writes
// prompt/completion examples to out: one cut per trajectory, drawn with a
// generator seeded by (seed, unit, index), or every cut when allCuts is set.
// The output file is written atomically.
func Export(inDir, out string, seed int64, allCuts bool) (*ExportStats, error) {
	matches, err := filepath.Glob(filepath.Join(inDir, "shard-*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("dataset: no shards in %s", inDir)
	}
	st := &ExportStats{ByAction: map[string]int{}}
	var buf bytes.Buffer
	for _, path := range matches { // Glob sorts, and shard names sort by number
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<28)
		line := 0
		for sc.Scan() {
			line++
			var rec Record
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				f.Close()
				return nil, fmt.Errorf("dataset: %s:%d: %w", path, line, err)
			}
			t, err := format.ParseTrajectory(rec.Text)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("dataset: %s:%d: %w", path, line, err)
			}
			st.Trajectories++
			cuts := make([]int, 0, len(t.Steps))
			if allCuts {
				for k := range t.Steps {
					cuts = append(cuts, k)
				}
			} else {
				r := rand.New(rand.NewPCG(uint64(seed), uint64(rec.Unit)<<16|uint64(rec.Index)))
				cuts = append(cuts, r.IntN(len(t.Steps)))
			}
			for _, k := range cuts {
				p, err := format.Prompt(t, k)
				if err != nil {
					f.Close()
					return nil, err
				}
				c, _ := format.Completion(t, k)
				ex := Example{Prompt: p, Completion: c, Action: string(t.Steps[k].Action), Direction: rec.Direction,
					ProgramID: rec.ProgramID, Unit: rec.Unit, Index: rec.Index, Cut: k}
				b, err := marshalLine(ex)
				if err != nil {
					f.Close()
					return nil, err
				}
				buf.Write(b)
				st.Examples++
				st.ByAction[ex.Action]++
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	return st, writeAtomic(out, buf.Bytes())
}
