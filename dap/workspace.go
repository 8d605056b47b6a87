package dap

import (
	"errors"
	"fmt"

	"ndb/internal/workspace"
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
		abs, err := workspace.ResolveDir(r)
		if err != nil {
			return fmt.Errorf("root %s: %w", r, err)
		}
		s.roots = append(s.roots, abs)
	}
	return nil
}

// confine checks a file a client named without reading it
// (workspace.Check: inside a root, a regular file, at most max bytes, 0: no
// size check) and returns its resolved path.
func (s *Server) confine(what, path string, max int64) (string, error) {
	real, err := workspace.Check(what, path, s.roots, max)
	return real, s.hint(err)
}

// readProgram reads a program file as workspace.Read does, bounded by
// MaxProgramBytes.
func (s *Server) readProgram(path string) (string, []byte, error) {
	real, b, err := workspace.Read("program", path, s.roots, MaxProgramBytes)
	return real, b, s.hint(err)
}

// hint adds to a refusal for the place how to widen the workspace.
func (s *Server) hint(err error) error {
	if errors.Is(err, workspace.ErrOutside) {
		return fmt.Errorf("%w; start ndb dap with --root for the folder it needs", err)
	}
	return err
}
