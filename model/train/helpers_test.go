package train

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/model/train/synthtext"
)

// writeShards writes nPrograms programs, perProgram trajectories each, as
// two JSONL shards in a new directory.
func writeShards(t testing.TB, nPrograms, perProgram int) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var shards [2]strings.Builder
	for p := 0; p < nPrograms; p++ {
		for k := 0; k < perProgram; k++ {
			text, prog := synthtext.Trajectory(rng, p)
			line, _ := json.Marshal(map[string]any{"text": text, "program_id": prog,
				"direction": "forward", "source": "synth", "actions": []string{}})
			shards[p%2].Write(append(line, '\n'))
		}
	}
	for i, s := range shards {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%03d.jsonl", i)), []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
