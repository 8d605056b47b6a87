// Command ndb is the neural debugger for Python. Each subcommand lives in its
// own file of this folder and registers itself with rootCmd in init; this
// file only wires them together.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:   "ndb",
	Short: "ndb: the neural debugger for Python",
	Long: `ndb traces Python programs, debugs them with pdb's commands forwards and
backwards, and predicts program states with a language model instead of running them.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ndb:", err)
		os.Exit(1)
	}
}
