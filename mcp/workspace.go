package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ndb/internal/workspace"
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
		r, err := workspace.ResolveDir(d)
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
			if workspace.WithinAny(c, w.Roots) {
				out = append(out, c)
			}
		}
		for _, r := range w.Roots {
			if workspace.WithinAny(r, client) {
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
		if d, err := workspace.ResolveDir(u.Path); err == nil {
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
// at most max bytes inside roots (workspace.Read), and returns its resolved
// path and text.
func readProgram(path string, roots []string, max int64) (string, string, error) {
	if max <= 0 {
		max = DefaultMaxProgram
	}
	real, b, err := workspace.Read("program", path, roots, max)
	return real, string(b), err
}
