package torch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchWindows: with --watch, the training stream is several packed
// folders end to end without copying them into one array; its windows,
// including those that cross from one folder into the next, must be the
// windows of the concatenated train.bin files.
func TestWatchWindows(t *testing.T) {
	py := numpyPython(t)
	f := newFixture(t)
	watch := filepath.Join(f.dir, "watch")
	for _, name := range []string{"r0001", "r0002", ".tmp-r0003"} { // the dot-name is a pack being written
		if err := os.CopyFS(filepath.Join(watch, name), os.DirFS(f.packDir)); err != nil {
			t.Fatal(err)
		}
	}
	script := `import sys, random, numpy as np
from ndb_torch import data as D
td = D.TrainData(sys.argv[1], sys.argv[2])
assert td.ready() == ["r0001", "r0002"], td.ready()
assert td.grow(1) == 1 and td.loaded == ["r0001"]
assert td.grow(5) == 1 and td.loaded == ["r0001", "r0002"] and td.grow(5) == 0
cat = np.concatenate([p.train for p in td.parts])
assert td.n_train == len(cat) == 3 * len(td.parts[0].train)
T, n = 32, len(td.parts[0].train)
offs = [0, n - T - 1, n - T, n - 1, n, 2 * n - 5, len(cat) - T - 1]
offs += D.batch_offsets(7, 3, 64, T, len(cat))
x, y = td.train_windows(offs, T)
wx, wy = D.windows(cat, offs, T)
assert (x == wx).all() and (y == wy).all()
assert (td.val == td.parts[0].val).all()
print("ok", len(offs))`
	cmd := exec.Command(py, "-c", script, f.packDir, watch)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("python: %v\n%s", err, out)
	}
}
