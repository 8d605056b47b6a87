package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"ndb/model/defaultmodel"
	"ndb/model/hf"
	"ndb/model/infer"
	"ndb/model/modelfile"
	"ndb/model/tokenizer"
)

var exportFlags struct {
	model   string
	out     string
	gguf    string
	dtype   string
	shardMB float64
}

var exportCmd = &cobra.Command{
	Use:   "export [--model FILE] (--out DIR | --gguf FILE) [--dtype f32|bf16|f16] [--shard-mb N]",
	Short: "Export a model to the Hugging Face Llama layout (safetensors, config.json, tokenizer.json) or to GGUF for llama.cpp",
	Long: `With --out, export writes DIR/model.safetensors (or shards of at most --shard-mb
MiB with model.safetensors.index.json), config.json for LlamaForCausalLM,
tokenizer.json, tokenizer_config.json, special_tokens_map.json and
generation_config.json. transformers, vLLM and ndb's PyTorch trainer load the
folder; ndb import reads it back.

With --gguf, export writes one GGUF file (llama architecture, byte-level BPE
tokenizer) that llama.cpp and the servers built on it load; send it ndb's token
ids (ndb debug --engine openai --openai-token-ids), since llama.cpp's own
pre-tokenizers split text differently (docs/interop.md).

The model is --model, else $NDB_MODEL, else the model embedded in ndb.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := exportFlags
		if f.out == "" && f.gguf == "" {
			return fmt.Errorf("export: --out DIR or --gguf FILE is required")
		}
		d, err := hf.ParseDType(f.dtype)
		if err != nil {
			return err
		}
		m, err := loadModelFile(f.model)
		if err != nil {
			return err
		}
		if f.out != "" {
			start := time.Now()
			if err := hf.Export(f.out, m, hf.ExportOptions{DType: d, MaxShardBytes: int64(f.shardMB * (1 << 20))}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %d parameters as %s to %s in %.2fs\n", len(m.Weights), d, f.out, time.Since(start).Seconds())
		}
		if f.gguf != "" {
			start := time.Now()
			if err := hf.ExportGGUF(f.gguf, m, hf.GGUFOptions{DType: d}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "exported %d parameters as GGUF %s to %s in %.2fs\n", len(m.Weights), d, f.gguf, time.Since(start).Seconds())
		}
		return nil
	},
}

// tokenIDsOf returns openai.Config.TokenIDs for the tokenizer of the model
// file at path ("" the default model), loaded on the first prompt, so that
// an engine that sends none never reads the file.
func tokenIDsOf(path string) func(string) ([]int32, error) {
	load := sync.OnceValues(func() (*tokenizer.Tokenizer, error) {
		m, err := loadModelFile(path)
		if err != nil {
			return nil, err
		}
		return m.Tokenizer, nil
	})
	return func(prompt string) ([]int32, error) {
		tok, err := load()
		if err != nil {
			return nil, err
		}
		return tok.Encode(prompt), nil
	}
}

// loadModelFile reads the model file at path; "" means the default model:
// $NDB_MODEL when set, else the embedded one (as infer.Default chooses).
func loadModelFile(path string) (*modelfile.Model, error) {
	if path == "" {
		path = os.Getenv(infer.ModelEnv)
	}
	if path != "" {
		return modelfile.Load(path)
	}
	b, err := defaultmodel.Bytes()
	if err != nil {
		return nil, err
	}
	m, err := modelfile.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("embedded model: %w", err)
	}
	return m, nil
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
	ef.StringVar(&exportFlags.model, "model", "", "ndb model file (default: $NDB_MODEL, else the embedded model)")
	ef.StringVar(&exportFlags.out, "out", "", "folder to write in the Hugging Face Llama layout")
	ef.StringVar(&exportFlags.gguf, "gguf", "", "GGUF file to write for llama.cpp")
	ef.StringVar(&exportFlags.dtype, "dtype", "f32", "f32, bf16 or f16")
	ef.Float64Var(&exportFlags.shardMB, "shard-mb", 0, "split the weights into files of at most this many MiB (0: one file)")
	inf := importCmd.Flags()
	inf.StringVar(&importFlags.dir, "hf", "", "Hugging Face Llama folder")
	inf.StringVar(&importFlags.out, "out", "", "ndb model file to write")
	rootCmd.AddCommand(exportCmd, importCmd)
}
