package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"ndb/model/hf"
	"ndb/model/modelfile"
)

var exportFlags struct {
	model   string
	out     string
	dtype   string
	shardMB float64
}

var exportCmd = &cobra.Command{
	Use:   "export --model FILE --out DIR [--dtype f32|bf16|f16] [--shard-mb N]",
	Short: "Export a model to the Hugging Face Llama layout (safetensors, config.json, tokenizer.json)",
	Long: `Export writes DIR/model.safetensors (or shards of at most --shard-mb MiB with
model.safetensors.index.json), config.json for LlamaForCausalLM, tokenizer.json,
tokenizer_config.json, special_tokens_map.json and generation_config.json.
transformers, vLLM and ndb's PyTorch trainer load the folder; ndb import reads it back.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := exportFlags
		if f.model == "" || f.out == "" {
			return fmt.Errorf("export: --model and --out are required")
		}
		d, err := hf.ParseDType(f.dtype)
		if err != nil {
			return err
		}
		m, err := modelfile.Load(f.model)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := hf.Export(f.out, m, hf.ExportOptions{DType: d, MaxShardBytes: int64(f.shardMB * (1 << 20))}); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "exported %d parameters as %s to %s in %.2fs\n", len(m.Weights), d, f.out, time.Since(start).Seconds())
		return nil
	},
}

var importFlags struct {
	dir string
	out string
}

var importCmd = &cobra.Command{
	Use:   "import --hf DIR --out FILE",
	Short: "Import a Hugging Face Llama folder (F32/BF16/F16 safetensors, sharded or not) as an ndb model file",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := importFlags
		if f.dir == "" || f.out == "" {
			return fmt.Errorf("import: --hf and --out are required")
		}
		m, err := hf.Import(f.dir)
		if err != nil {
			return err
		}
		if err := modelfile.Save(f.out, m); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "imported %d parameters (%d layers, width %d, vocab %d) -> %s\n",
			len(m.Weights), m.Config.Layers, m.Config.Dim, m.Config.Vocab, f.out)
		return nil
	},
}

func init() {
	ef := exportCmd.Flags()
	ef.StringVar(&exportFlags.model, "model", "", "ndb model file")
	ef.StringVar(&exportFlags.out, "out", "", "folder to write")
	ef.StringVar(&exportFlags.dtype, "dtype", "f32", "f32, bf16 or f16")
	ef.Float64Var(&exportFlags.shardMB, "shard-mb", 0, "split the weights into files of at most this many MiB (0: one file)")
	inf := importCmd.Flags()
	inf.StringVar(&importFlags.dir, "hf", "", "Hugging Face Llama folder")
	inf.StringVar(&importFlags.out, "out", "", "ndb model file to write")
	rootCmd.AddCommand(exportCmd, importCmd)
}
