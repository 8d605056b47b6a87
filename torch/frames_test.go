package torch_test

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ndb/model/train"
)

// TestFrameTargetsMatchGo: ndb_torch.data.frame_targets (numpy, what
// `--loss-on frames` trains on) marks the same tokens as model/train's
// FrameTargets, on hand-made streams (edges: a stream starting inside a
// frame, an action_sep outside one, repeated separators) and random ones.
func TestFrameTargetsMatchGo(t *testing.T) {
	py := numpyPython(t)
	ft := train.FrameTokens{BOS: 1, FrameSep: 2, ActionSep: 3}
	streams := [][]uint32{
		{},
		{5},
		{2, 5, 6, 3, 7, 2, 8, 9},
		{5, 3, 2, 3, 3, 2, 2, 6, 1, 6, 2, 1, 6},
		{1, 9, 9, 2, 4, 4, 3, 8, 2, 4, 3, 8, 2, 5, 6, 7, 1, 9, 2, 4},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 20; n++ {
		s := make([]uint32, 1+rng.IntN(400))
		for i := range s {
			s[i] = uint32(rng.IntN(8)) // separators are frequent
		}
		streams = append(streams, s)
	}
	dir := t.TempDir()
	script := `import sys, numpy as np
from ndb_torch.data import frame_targets
for p in sys.argv[1:]:
    t = np.fromfile(p, dtype="<u4")
    frame_targets(t, 1, 2, 3).astype(np.uint8).tofile(p + ".mask")`
	var paths []string
	for i, s := range streams {
		p := filepath.Join(dir, "s"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		buf := make([]byte, 4*len(s))
		for j, v := range s {
			binary.LittleEndian.PutUint32(buf[4*j:], v)
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	cmd := exec.Command(py, append([]string{"-c", script}, paths...)...)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	for i, s := range streams {
		got, err := os.ReadFile(paths[i] + ".mask")
		if err != nil {
			t.Fatal(err)
		}
		want := train.FrameTargets(s, ft)
		if len(got) != len(want) {
			t.Fatalf("stream %d: %d marks, want %d", i, len(got), len(want))
		}
		for j := range want {
			if (got[j] == 1) != want[j] {
				t.Fatalf("stream %d %v: token %d marked %v by numpy, %v by Go", i, s, j, got[j] == 1, want[j])
			}
		}
	}
}
