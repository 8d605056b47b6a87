package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxProgram bounds a program file debug_start reads (1 MiB: far
// more than any script an agent debugs, small enough that a hostile path
// cannot grow the server).
const DefaultMaxProgram = 1 << 20

// maxStdin bounds debug_start's stdin (the MCP message bounds it too).
const maxStdin = 1 << 20

// rootsTimeout bounds the wait for a client's answer to roots/list.
const rootsTimeout = 5 * time.Second

// Workspace is where programs given by path may be read from: the folders
// given on the command line (Roots; Explicit when they were given, rather
// than the current directory by default), narrowed or replaced by the MCP
// roots of the client:
//
//   - explicit folders are a ceiling: a path must be inside one of them and,
//     when the client offers roots, inside one of those too;
//   - without them, the client's roots are the workspace when it offers
//     any, else the current directory; a current directory of "/" (as some
//     clients start servers) is no workspace at all: every path is refused
//     until --root or the client's roots name one.
type Workspace struct {
	Roots    []string
	Explicit bool
	MaxBytes int64 // a program file's size cap; 0 = DefaultMaxProgram
}

// DefaultWorkspace is the current directory, not explicit.
func DefaultWorkspace() Workspace {
	wd, err := os.Getwd()
	if err != nil {
		return Workspace{}
	}
	return Workspace{Roots: []string{wd}}
}

// NewWorkspace resolves dirs (each must be an existing folder) into an
// explicit workspace.
func NewWorkspace(dirs []string) (Workspace, error) {
	w := Workspace{Explicit: true}
	for _, d := range dirs {
		r, err := resolveDir(d)
		if err != nil {
			return Workspace{}, fmt.Errorf("--root %s: %w", d, err)
		}
		w.Roots = append(w.Roots, r)
	}
	if len(w.Roots) == 0 {
		return Workspace{}, errors.New("no workspace root given")
	}
	return w, nil
}

// resolveDir makes d absolute with its symbolic links resolved, and checks
// that it is a folder.
func resolveDir(d string) (string, error) {
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

// within reports whether path (absolute, clean) is root or below it.
func within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

func withinAny(path string, roots []string) bool {
	for _, r := range roots {
		if within(path, r) {
			return true
		}
	}
	return false
}

// allowed returns the folders a path may be in for a call from cs: see
// Workspace. The client is asked for its roots when it declared them.
func (w Workspace) allowed(ctx context.Context, cs *sdk.ServerSession) ([]string, error) {
	client, offered, err := clientRoots(ctx, cs)
	if err != nil {
		return nil, err
	}
	var out []string
	switch {
	case w.Explicit && !offered:
		out = w.Roots
	case w.Explicit:
		// Both: the client's roots inside the ceiling, and the ceiling's
		// folders inside a client root.
		for _, c := range client {
			if withinAny(c, w.Roots) {
				out = append(out, c)
			}
		}
		for _, r := range w.Roots {
			if withinAny(r, client) {
				out = append(out, r)
			}
		}
	case offered:
		out = client
	default:
		for _, r := range w.Roots {
			if r != "/" {
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no workspace root allows program files here: start ndb mcp with --root DIR (or from the project's folder), or have the client offer MCP roots; source text (with its line breaks) needs no file")
	}
	return out, nil
}

// clientRoots asks the client for its roots when it declared the
// capability; offered is false when it did not, when it has none that is
// a local folder, or when its protocol (2026-07-28 and later, where roots
// are deprecated) forbids asking in the middle of a tool call.
func clientRoots(ctx context.Context, cs *sdk.ServerSession) (roots []string, offered bool, err error) {
	if cs == nil {
		return nil, false, nil
	}
	ip := cs.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.RootsV2 == nil || ip.ProtocolVersion >= rootsUntil {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := cs.ListRoots(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("the client declared MCP roots but roots/list failed: %v", err)
	}
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			continue // only local folders can hold a program
		}
		if d, err := resolveDir(u.Path); err == nil {
			roots = append(roots, d)
		}
	}
	return roots, len(roots) > 0, nil
}

// rootsUntil is the first MCP version that has no server-to-client
// roots/list during a call (SEP-2322: it would take a multi round-trip
// result); the workspace is then the command line's.
const rootsUntil = "2026-07-28"

// readProgram reads the program file at path if it is a regular file of
// at most max bytes inside roots, and returns its resolved path and text.
// Errors name the path and the reason only, never the file's content, and
// say nothing about what lies outside the roots.
func readProgram(path string, roots []string, max int64) (string, string, error) {
	if max <= 0 {
		max = DefaultMaxProgram
	}
	outside := fmt.Errorf("program %s: outside the workspace roots (%s)", path, strings.Join(roots, ", "))
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("program %s: %v", path, err)
	}
	if !withinAny(abs, roots) {
		return "", "", outside // refused before any look at the file
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", fmt.Errorf("program %s: no such file in the workspace (give a file path, or the source with its line breaks)", path)
	}
	if !withinAny(real, roots) {
		return "", "", outside // a link out of the workspace
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("program %s: not a regular file", path)
	}
	// O_NONBLOCK: a FIFO swapped in meanwhile must not hang the open; the
	// checks below run on what was opened.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", "", fmt.Errorf("program %s: cannot be opened: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("program %s: not a regular file", path)
	}
	if opened, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil && !withinAny(opened, roots) {
		return "", "", outside // a folder of the path was swapped for a link meanwhile
	}
	if fi.Size() > max {
		return "", "", fmt.Errorf("program %s: %d bytes, more than the limit of %d", path, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return "", "", fmt.Errorf("program %s: read failed", path)
	}
	if int64(len(b)) > max {
		return "", "", fmt.Errorf("program %s: more than the limit of %d bytes", path, max)
	}
	return real, string(b), nil
}
