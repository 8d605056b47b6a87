package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"ndb/model/modelfile"
	"ndb/model/nn"
)

var growFlags struct {
	model  string
	out    string
	layers int
}

var growCmd = &cobra.Command{
	Use:   "grow --model FILE --layers N --out FILE",
	Short: "Deepen a trained model without changing what it computes (then train it on with --init)",
	Long: `Grow writes a model with N blocks that computes exactly what --model computes: after each
old block come copies of it whose residual outputs (o_proj, down_proj) are zero, so they add
nothing until training moves them (nn.GrowDepth). Train the result with ndb train --init FILE:
the deeper model starts where the trained one is. The optimizer state is not carried over.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := growFlags
		if f.model == "" || f.out == "" || f.layers <= 0 {
			return fmt.Errorf("grow: --model, --layers and --out are required")
		}
		m, err := modelfile.Load(f.model)
		if err != nil {
			return err
		}
		cfg, w, err := nn.GrowDepth(m.Config, m.Weights, f.layers)
		if err != nil {
			return err
		}
		name := m.Meta["config_name"]
		if name == "" {
			name = "grown"
		}
		meta := map[string]string{"grown_from": f.model, "config_name": fmt.Sprintf("%s-%dL", name, cfg.Layers)}
		if err := modelfile.Save(f.out, &modelfile.Model{Config: cfg, Tokenizer: m.Tokenizer, Weights: w, Meta: meta}); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "grew %d -> %d layers (%d -> %d parameters) -> %s\n",
			m.Config.Layers, cfg.Layers, len(m.Weights), len(w), f.out)
		return nil
	},
}

func init() {
	fl := growCmd.Flags()
	fl.StringVar(&growFlags.model, "model", "", "ndb model file to grow")
	fl.IntVar(&growFlags.layers, "layers", 0, "blocks of the grown model (at least the model's)")
	fl.StringVar(&growFlags.out, "out", "", "ndb model file to write")
	rootCmd.AddCommand(growCmd)
}
