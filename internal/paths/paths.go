// Package paths finds the repository root and the shared data folder, for
// commands and tests alike (SPEC's data rule: --data-dir, else NDB_DATA_DIR,
// else ../shared/data next to the repository root).
package paths

import (
	"errors"
	"os"
	"path/filepath"
)

// DataDirEnv is the environment variable that names the shared data folder.
const DataDirEnv = "NDB_DATA_DIR"

// ErrNoRepoRoot says no folder at or above the start holds go.mod.
var ErrNoRepoRoot = errors.New("no go.mod above the working directory")

// RepoRoot returns the nearest folder at or above dir that holds go.mod
// (the working directory when dir is "").
func RepoRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoRepoRoot
		}
		dir = parent
	}
}

// DataDir resolves the shared data folder: flag when set, else
// $NDB_DATA_DIR, else ../shared/data relative to the repository root above
// the working directory. It does not check that the folder exists.
func DataDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if env := os.Getenv(DataDirEnv); env != "" {
		return env, nil
	}
	root, err := RepoRoot("")
	if err != nil {
		return "", errors.New("no --data-dir, no " + DataDirEnv + ", and " + err.Error())
	}
	return filepath.Join(root, "..", "shared", "data"), nil
}
