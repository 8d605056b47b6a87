package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"ndb/engine"
	"ndb/mcp"
)

var mcpFlags struct {
	engineFlags
	live   liveFlags
	engine string
}

var mcpCmd = &cobra.Command{
	Use:   "mcp",
	Short: "Serve the Model Context Protocol on stdio (tools for agents)",
	Long: `mcp serves ndb's tools to an agent over stdio: debug_start, debug_step, debug_breakpoint,
debug_continue, debug_context, evaluate, predict_output and predict_input. The real engine's
sessions are live: evaluate runs in the program where it is stopped. See docs/mcp.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		opts := mcpFlags.options()
		opts.Live = true // the real engine's sessions wait at their stop: evaluate runs there
		var err error
		if opts.Limits, err = mcpFlags.live.limits(opts.Limits); err != nil {
			return err
		}
		reg := engine.NewRegistry(opts)
		defer reg.Close()
		def := mcpFlags.engine
		if def == "" {
			def = engine.Real
			if haveDefaultModel() {
				def = engine.Model
			}
		}
		// LineTransport, not the SDK's StdioTransport: a malformed line is
		// answered with a JSON-RPC error instead of ending the server.
		return mcp.NewServer(reg, def).Run(ctx, &mcp.LineTransport{Reader: cmd.InOrStdin(), Writer: cmd.OutOrStdout(), Log: cmd.ErrOrStderr()})
	},
}

func init() {
	f := mcpCmd.Flags()
	mcpFlags.add(f, true)
	mcpFlags.live.add(f)
	f.StringVar(&mcpFlags.engine, "engine", "", "engine when a tool names none (default: model when a default model exists, else real)")
	rootCmd.AddCommand(mcpCmd)
}
