// Package workspace is the one rule by which ndb's servers (dap, mcp) read a
// file a client names: inside the workspace's root folders after symbolic
// links are resolved, a regular file, of bounded size, and errors that name
// the path and the rule, never the file's content.
package workspace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ResolveDir makes d absolute with its symbolic links resolved and checks
// that it is a folder.
func ResolveDir(d string) (string, error) {
	a, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(a)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a folder")
	}
	return r, nil
}

// Within reports whether path (absolute, clean) is root or below it.
func Within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// WithinAny reports whether path is within one of roots.
func WithinAny(path string, roots []string) bool {
	for _, r := range roots {
		if Within(path, r) {
			return true
		}
	}
	return false
}

// Check resolves path (relative to the current folder) and checks it
// without reading it: inside roots (nil: anywhere), a regular file, at most
// max bytes (0: any size). It returns the resolved path. what names the
// file in errors ("program", "model").
func Check(what, path string, roots []string, max int64) (string, error) {
	real, err := resolve(what, path, roots)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil || !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s %s: not a regular file", what, path)
	case max > 0 && fi.Size() > max:
		return "", fmt.Errorf("%s %s: %d bytes, more than the limit of %d", what, path, fi.Size(), max)
	}
	return real, nil
}

// Read checks path as Check does and reads it, bounded by max (> 0) even if
// the file grows, or reports size 0 as /proc's files do, after the check.
// The open cannot hang on a FIFO swapped in meanwhile, and what was opened
// is checked again, so a folder swapped for a link cannot lead outside.
func Read(what, path string, roots []string, max int64) (string, []byte, error) {
	real, err := resolve(what, path, roots)
	if err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: cannot be opened: %v", what, path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s %s: not a regular file", what, path)
	}
	if roots != nil {
		if opened, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil && !WithinAny(opened, roots) {
			return "", nil, outside(what, path, roots)
		}
	}
	if fi.Size() > max {
		return "", nil, fmt.Errorf("%s %s: %d bytes, more than the limit of %d", what, path, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: read failed", what, path)
	}
	if int64(len(b)) > max {
		return "", nil, fmt.Errorf("%s %s: more than the limit of %d bytes", what, path, max)
	}
	return real, b, nil
}

// resolve makes path absolute and resolves its links, refusing a path
// outside roots (nil: no confinement) before looking at the file, and again
// after the links are resolved.
func resolve(what, path string, roots []string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%s: no path", what)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", what, path, err)
	}
	if roots != nil && !WithinAny(abs, roots) {
		return "", outside(what, path, roots)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s %s: no such file in the workspace", what, path)
	}
	if roots != nil && !WithinAny(real, roots) {
		return "", outside(what, path, roots) // a link out of the workspace
	}
	return real, nil
}

// ErrOutside is the error (under errors.Is) of a path outside the roots.
var ErrOutside = errors.New("outside the workspace roots")

func outside(what, path string, roots []string) error {
	return fmt.Errorf("%s %s: %w (%s)", what, path, ErrOutside, strings.Join(roots, ", "))
}
