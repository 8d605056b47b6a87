package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"ndb/dap"
	"ndb/engine"
	"ndb/mcp"
)

var mcpFlags struct {
	engineFlags
	live        liveFlags
	engine      string
	roots       []string
	http        string
	allowRemote bool
	idle        time.Duration
	maxSessions int
	maxLive     int
	maxProgram  int64
}

var mcpCmd = &cobra.Command{
	Use:   "mcp [--root DIR]... [--http 127.0.0.1:PORT]",
	Short: "Serve the Model Context Protocol on stdio or Streamable HTTP (tools for agents)",
	Long: `mcp serves ndb's tools to an agent over stdio, or with --http over MCP's Streamable
HTTP transport on a loopback address (every request needs the bearer token printed at start,
random or $NDB_MCP_TOKEN; sessions then outlive a client's connection, for one-shot clients).
Tools: debug_start, debug_step, debug_continue, debug_breakpoint, debug_context,
debug_source, debug_restart, debug_end, debug_sessions, evaluate, predict_output and
predict_input. Program files must be inside the workspace: the --root folders (narrowed by
the client's MCP roots), else the client's roots, else the current directory. The real
engine's sessions are live: evaluate runs in the program where it is stopped. See docs/mcp.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		opts, err := mcpFlags.options()
		if err != nil {
			return err
		}
		opts.Live = true // the real engine's sessions wait at their stop: evaluate runs there
		if opts.Limits, err = mcpFlags.live.limits(opts.Limits); err != nil {
			return err
		}
		if mcpFlags.idle < 0 {
			return fmt.Errorf("--idle-timeout must not be negative (0: never)")
		}
		ws := mcp.DefaultWorkspace()
		if len(mcpFlags.roots) > 0 {
			if ws, err = mcp.NewWorkspace(mcpFlags.roots); err != nil {
				return err
			}
		}
		if mcpFlags.maxProgram <= 0 || mcpFlags.maxSessions <= 0 || mcpFlags.maxLive <= 0 {
			return fmt.Errorf("--max-program-kb, --max-sessions and --max-live must be positive")
		}
		ws.MaxBytes = mcpFlags.maxProgram << 10
		var listen net.Listener
		if mcpFlags.http != "" {
			if err := dap.CheckLoopback(mcpFlags.http); err != nil && !mcpFlags.allowRemote {
				return fmt.Errorf("--http %s: %w", mcpFlags.http, err)
			}
			if listen, err = (&net.ListenConfig{}).Listen(ctx, "tcp", mcpFlags.http); err != nil {
				return err
			}
		}
		reg := engine.NewRegistry(opts)
		defer reg.Close()
		def := mcpFlags.engine
		if def == "" {
			def = reg.Default() // the one policy: model when there is one, else real
		}
		srv := mcp.NewServer(reg, def)
		srv.SetWorkspace(ws)
		srv.SetIdleTimeout(mcpFlags.idle)
		srv.SetMaxSessions(mcpFlags.maxSessions)
		srv.SetMaxLive(mcpFlags.maxLive)
		if listen != nil {
			tok := os.Getenv("NDB_MCP_TOKEN")
			if tok == "" {
				tok = dap.NewToken()
			}
			url := "http://" + listen.Addr().String() + mcp.HTTPPath
			fmt.Fprintf(cmd.ErrOrStderr(), "ndb mcp: listening on %s\nndb mcp: token %s (send the header \"Authorization: Bearer %s\")\n", url, tok, tok)
			return srv.ServeHTTP(ctx, listen, mcp.HTTPOptions{Token: tok})
		}
		// LineTransport, not the SDK's StdioTransport: a malformed line is
		// answered with a JSON-RPC error instead of ending the server.
		return srv.Run(ctx, &mcp.LineTransport{Reader: cmd.InOrStdin(), Writer: cmd.OutOrStdout(), Log: cmd.ErrOrStderr()})
	},
}

func init() {
	f := mcpCmd.Flags()
	mcpFlags.add(f, true, engine.InteractiveJumps)
	mcpFlags.live.add(f)
	f.StringVar(&mcpFlags.engine, "engine", "", "engine when a tool names none (default: model when a default model exists, else real)")
	f.StringArrayVar(&mcpFlags.roots, "root", nil, "a folder program files may be read from (repeatable; default: the client's MCP roots, else the current directory)")
	f.StringVar(&mcpFlags.http, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8765; port 0 picks one) instead of stdio; requests need the printed bearer token")
	f.BoolVar(&mcpFlags.allowRemote, "allow-remote", false, "allow an --http address that is not loopback")
	f.DurationVar(&mcpFlags.idle, "idle-timeout", mcp.DefaultIdleTimeout, "close a session unused for this long (0: never)")
	f.IntVar(&mcpFlags.maxSessions, "max-sessions", mcp.DefaultMaxSessions, "sessions open at once (the least recently used is closed to make room)")
	f.IntVar(&mcpFlags.maxLive, "max-live", mcp.DefaultMaxLive, "live real-engine sessions (each a Python process) open at once")
	f.Int64Var(&mcpFlags.maxProgram, "max-program-kb", mcp.DefaultMaxProgram>>10, "largest program file debug_start reads, in KiB")
	rootCmd.AddCommand(mcpCmd)
}
