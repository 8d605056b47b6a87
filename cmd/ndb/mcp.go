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
	engine string
}

var mcpCmd = &cobra.Command{
	Use:   "mcp",
	Short: "Serve the Model Context Protocol on stdio (tools for agents)",
	Long: `mcp serves ndb's tools to an agent over stdio: debug_start, debug_step, debug_breakpoint,
debug_continue, debug_context, predict_output and predict_input. See docs/mcp.md.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		reg := engine.NewRegistry(mcpFlags.options())
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
		return mcp.NewServer(reg, def).Run(ctx, &mcp.LineTransport{Reader: os.Stdin, Writer: os.Stdout, Log: os.Stderr})
	},
}

func init() {
	f := mcpCmd.Flags()
	mcpFlags.add(f, true)
	f.StringVar(&mcpFlags.engine, "engine", "", "engine when a tool names none (default: model when a default model exists, else real)")
	rootCmd.AddCommand(mcpCmd)
}
