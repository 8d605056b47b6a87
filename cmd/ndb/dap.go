package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"ndb/dap"
	"ndb/engine"
)

var dapFlags struct {
	engineFlags
	live        liveFlags
	listen      string
	allowRemote bool
	engine      string
	roots       []string
}

var dapCmd = &cobra.Command{
	Use:   "dap [--listen 127.0.0.1:PORT | --listen unix:PATH]",
	Short: "Serve the Debug Adapter Protocol (VS Code) on stdio, a loopback port or a unix socket",
	Long: `dap speaks the Debug Adapter Protocol on stdin/stdout, or with --listen on a TCP
address (loopback only unless --allow-remote) or a unix socket (unix:PATH, mode 0600).
The real engine runs programs for whoever connects, so a TCP connection must present the
token printed at start (random, or $NDB_DAP_TOKEN) as "token" in its initialize or launch
arguments (before it only initialize is accepted); a unix socket needs none but accepts
only processes of the same user in ndb's own namespaces (never a sandboxed program), and
may not be placed inside a workspace root. Programs must be regular files inside the
workspace roots (--root, default with --listen: the current folder). Launch arguments: program,
engine (real, model, openai, cwm), model, call, stopOnEntry, noDebug, terminateAtEnd,
token. Stepping back and reverse continue are supported. On the real engine the program
runs live: pause interrupts it, evaluate (watch, hover, the debug console's expressions and
statements) and setVariable run in its frames. In the debug console, back, resample,
set NAME = VALUE and verify work on model engines. Malformed input is answered
with an error and never ends the server. See docs/dap.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		// SIGTERM too: a unix socket's file is removed on the way out.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		// Live: the real engine's program runs only as far as the
		// commands need and waits at the stop, so pause, evaluate and
		// setVariable work on it.
		opts, err := dapFlags.options()
		if err != nil {
			return err
		}
		opts.Live = true
		if opts.Limits, err = dapFlags.live.limits(opts.Limits); err != nil {
			return err
		}
		reg := engine.NewRegistry(opts)
		defer reg.Close()
		srv := dap.NewServer(reg, os.Stderr)
		def := dapFlags.engine
		if def == "" {
			def = reg.Default() // the one policy: model when there is one, else real
		}
		srv.SetDefaultEngine(def)
		// Workspace roots: the files a client may name. A listener's
		// clients are anyone who gets in, so it defaults to the current
		// folder; stdio's client started ndb itself, so only --root
		// confines it.
		roots := dapFlags.roots
		if len(roots) == 0 && dapFlags.listen != "" {
			roots = []string{"."}
		}
		if err := srv.SetRoots(roots); err != nil {
			return err
		}
		if dapFlags.listen == "" {
			// A read of stdin blocks past ctx: on a signal, close the
			// engines (their programs) and end here, as a client's
			// stopAdapter expects.
			served := make(chan struct{})
			defer close(served)
			go func() {
				select {
				case <-ctx.Done():
					reg.Close()
					os.Exit(0)
				case <-served:
				}
			}()
			return srv.Serve(ctx, os.Stdin, os.Stdout)
		}
		srv.SetToken(os.Getenv("NDB_DAP_TOKEN")) // "" = a random one
		return srv.Listen(ctx, dapFlags.listen, dapFlags.allowRemote, func(a net.Addr) {
			if a.Network() == "unix" {
				fmt.Fprintf(os.Stderr, "ndb dap: listening on unix:%s (mode 0600, no token: peers of this user outside any sandbox only)\n", a)
				return
			}
			fmt.Fprintf(os.Stderr, "ndb dap: listening on %s\nndb dap: token %s (add \"token\": \"%s\" to the launch arguments)\n", a, srv.Token(), srv.Token())
		})
	},
}

func init() {
	f := dapCmd.Flags()
	dapFlags.add(f, true, engine.InteractiveJumps)
	dapFlags.live.add(f)
	f.StringVar(&dapFlags.listen, "listen", "", "serve on this TCP address (e.g. 127.0.0.1:4711; clients need the printed token) or unix socket (unix:/path, mode 0600) instead of stdio")
	f.StringVar(&dapFlags.engine, "engine", "", "engine of launches that name none (default: model when a default model exists, else real)")
	f.BoolVar(&dapFlags.allowRemote, "allow-remote", false, "allow a --listen address that is not loopback")
	f.StringArrayVar(&dapFlags.roots, "root", nil, "workspace folder: programs (and model files) that clients launch must be inside one (repeatable; default with --listen: the current folder; a unix socket may not be inside one)")
	rootCmd.AddCommand(dapCmd)
}
