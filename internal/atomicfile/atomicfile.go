// Package atomicfile writes files so that a reader (or a run killed half
// way) sees either the old file or the whole new one, never a part.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// TempPattern is the os.CreateTemp pattern of WriteFile's temporary file,
// next to path: a killed run leaves path's base name + ".tmp-" + digits.
func TempPattern(path string) string { return filepath.Base(path) + ".tmp-*" }

// WriteFile writes data to a temporary file in path's folder, makes it
// world-readable (0644), syncs it and renames it over path. On error the
// temporary file is removed and path is untouched.
func WriteFile(path string, data []byte) (err error) {
	// The rename would refuse a folder with "file exists", naming the
	// temporary file: say what is wrong instead.
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a file path", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), TempPattern(path))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes 0600 files
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
