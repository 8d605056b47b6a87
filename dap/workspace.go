package dap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MaxProgramBytes bounds a program file (and a model file named by a
// launch is checked for place and kind only: the engine reads it).
const MaxProgramBytes = 4 << 20

// SetRoots confines the files a client names (launch's program and model,
// the sources of breakpoints set before launch) to these folders and what
// is under them, after symbolic links are resolved; none (the default, and
// stdio's: its client started ndb as its own user) confines nothing. A
// root that does not exist is an error.
func (s *Server) SetRoots(roots []string) error {
	s.roots = nil
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return fmt.Errorf("root %s: %w", r, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return fmt.Errorf("root %s is not a folder", r)
		}
		s.roots = append(s.roots, abs)
	}
	return nil
}

// Roots are the workspace roots (SetRoots), resolved.
func (s *Server) Roots() []string { return s.roots }

// within reports whether path is root or under it (both clean, absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// confine resolves a path a client named (relative to the current folder)
// and checks it: inside a root, a regular file, at most max bytes (0: no
// size check). The error names the path and the rule, never the file's
// content.
func (s *Server) confine(what, path string, max int64) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%s: no path", what)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s %s: no such file", what, path)
	}
	if len(s.roots) > 0 && !inRoots(s.roots, real) {
		return "", fmt.Errorf("%s %s is outside the workspace (%s); start ndb dap with --root for its folder", what, path, strings.Join(s.roots, ", "))
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", what, path, errors.Unwrap(err))
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s %s is not a regular file", what, path)
	case max > 0 && fi.Size() > max:
		return "", fmt.Errorf("%s %s has %d bytes, over the limit of %d", what, path, fi.Size(), max)
	}
	return real, nil
}

func inRoots(roots []string, p string) bool {
	for _, r := range roots {
		if within(r, p) {
			return true
		}
	}
	return false
}

// readProgram reads a program file confined as confine says, bounded by
// MaxProgramBytes even if the file grows after the check.
func (s *Server) readProgram(path string) (string, []byte, error) {
	real, err := s.confine("program", path, MaxProgramBytes)
	if err != nil {
		return "", nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return "", nil, fmt.Errorf("program %s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxProgramBytes+1))
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("program %s: %w", path, err)
	case len(b) > MaxProgramBytes:
		return "", nil, fmt.Errorf("program %s is over the limit of %d bytes", path, MaxProgramBytes)
	}
	return real, b, nil
}
