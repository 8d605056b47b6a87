package torch_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGPURecipeDryRun runs `torch/gpu_recipe.sh --dry-run`: the whole GPU
// recipe on this machine's CPU with a tiny budget (static ndb built and
// staged, trajectories generated while the trainer runs, BF16 shards in
// $OUT within the device tool's limits, imported back by ndb). It takes
// about a minute once Go's build cache is warm, so it runs only when asked:
//
//	NDB_TORCH_RECIPE=1 go test -run GPURecipe -v ./torch/
func TestGPURecipeDryRun(t *testing.T) {
	if os.Getenv("NDB_TORCH_RECIPE") == "" {
		t.Skip("set NDB_TORCH_RECIPE=1 to run the GPU recipe's dry run (about a minute)")
	}
	python(t)
	dry := t.TempDir()
	cmd := exec.Command("bash", "gpu_recipe.sh", "--dry-run")
	cmd.Env = append(os.Environ(), "NDB_RECIPE_DRY="+dry)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gpu_recipe.sh --dry-run: %v\n%s", err, out)
	}
	var files []string
	filepath.Walk(filepath.Join(dry, "out"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			files = append(files, p)
			if fi.Size() > 16<<20 {
				t.Errorf("%s is %d bytes, over the 16 MiB a file may have to come back", p, fi.Size())
			}
		}
		return nil
	})
	if len(files) > 8 {
		t.Errorf("$OUT holds %d files, more than the 8 that come back: %v", len(files), files)
	}
	var sum struct {
		Steps        int     `json:"steps"`
		Rounds       int     `json:"rounds_packed"`
		ValLoss      float64 `json:"val_loss"`
		TokensPerSec float64 `json:"tokens_per_s"`
	}
	data, err := os.ReadFile(filepath.Join(dry, "out", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Steps == 0 || sum.Rounds < 2 {
		t.Errorf("dry run trained %d steps on %d packed rounds; want steps and at least one round generated during training", sum.Steps, sum.Rounds)
	}
	if _, err := os.Stat(filepath.Join(dry, "imported.model")); err != nil {
		t.Errorf("ndb import of the result: %v", err)
	}
	t.Logf("dry run: %d steps, %d rounds packed, val loss %.3f, %.0f tokens/s; %d files in $OUT", sum.Steps, sum.Rounds, sum.ValLoss, sum.TokensPerSec, len(files))
}
