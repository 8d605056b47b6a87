package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"ndb/dap"
	"ndb/engine"
)

var dapFlags struct {
	engineFlags
	listen      string
	allowRemote bool
	engine      string
}

var dapCmd = &cobra.Command{
	Use:   "dap [--listen 127.0.0.1:PORT]",
	Short: "Serve the Debug Adapter Protocol (VS Code) on stdio or a loopback port",
	Long: `dap speaks the Debug Adapter Protocol on stdin/stdout, or with --listen on a TCP
address (loopback only unless --allow-remote: the real engine runs programs for whoever
connects). Launch arguments: program, engine (real, model, openai, cwm), model, call,
stopOnEntry. Stepping back and reverse continue are supported. In the debug console,
back, resample, set NAME = VALUE and verify work on model engines. See docs/dap.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		reg := engine.NewRegistry(dapFlags.options())
		defer reg.Close()
		srv := dap.NewServer(reg, os.Stderr)
		def := dapFlags.engine
		if def == "" {
			def = engine.Real
			if haveDefaultModel() {
				def = engine.Model
			}
		}
		srv.SetDefaultEngine(def)
		if dapFlags.listen == "" {
			return srv.Serve(ctx, os.Stdin, os.Stdout)
		}
		return srv.Listen(ctx, dapFlags.listen, dapFlags.allowRemote, func(a net.Addr) {
			fmt.Fprintf(os.Stderr, "ndb dap: listening on %s\n", a)
		})
	},
}

func init() {
	f := dapCmd.Flags()
	dapFlags.add(f, true)
	f.StringVar(&dapFlags.listen, "listen", "", "serve on this TCP address (e.g. 127.0.0.1:4711) instead of stdio")
	f.StringVar(&dapFlags.engine, "engine", "", "engine of launches that name none (default: model when a default model exists, else real)")
	f.BoolVar(&dapFlags.allowRemote, "allow-remote", false, "allow a --listen address that is not loopback")
	rootCmd.AddCommand(dapCmd)
}
