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
tokenizer) that llama.cpp and the servers built on it load. A tokenizer trained
with --pretokenizer llama3 is exported as llama.cpp's llama-bpe and tokenizes text
there as in ndb; for one with ndb's own split (the shipped models) send ndb's token
ids (ndb debug --engine openai --openai-token-ids), as llama.cpp splits text
differently (docs/interop.md).

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
	dir   string
	out   string
	dtype string
}

var importCmd = &cobra.Command{
	Use:   "import --hf DIR --out FILE [--dtype f32|bf16|q8]",
	Short: "Import a Hugging Face Llama folder (F32/BF16/F16 safetensors, sharded or not) as an ndb model file",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := importFlags
		if f.dir == "" || f.out == "" {
			return fmt.Errorf("import: --hf and --out are required")
		}
		d, err := modelfile.ParseDType(f.dtype)
		if err != nil {
			return err
		}
		m, err := hf.Import(f.dir)
		if err != nil {
			return err
		}
		m.DType = d
		if err := modelfile.Save(f.out, m); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "imported %d parameters (%d layers, width %d, vocab %d) as %s -> %s\n",
			len(m.Weights), m.Config.Layers, m.Config.Dim, m.Config.Vocab, d, f.out)
		return nil
	},
}

var convertFlags struct {
	model  string
	out    string
	dtype  string
	toward string
	t      float64
}

var convertCmd = &cobra.Command{
	Use:   "convert [--model FILE] --out FILE [--dtype f32|bf16|q8] [--toward FILE --t T]",
	Short: "Rewrite a model file: weights stored as f32, bf16 or q8, or moved toward a fine-tuned model",
	Long: `convert writes the model (--model, else $NDB_MODEL, else the embedded one) to
--out.

--dtype stores the weights as f32 exactly (4 bytes a weight), bf16 rounded to
nearest even (2 bytes), or q8, each matrix row as int8 with one float32 scale (a
little over 1 byte). ndb widens them to float32 when it loads the file, so the
smaller types cost precision, not speed (docs/tokenizer.md, "Model file").
Without --dtype the weights keep the model's type.

--toward FILE --t T writes (1-T)*model + T*FILE, weight by weight: the two must
share config and tokenizer, as a model and one trained on from it do. A point
between a model and its fine-tuned descendant can keep the old data's accuracy
and much of the new data's (docs/default-model.md, "Stage 11").

Training state is dropped: a file to resume training from stays f32.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := convertFlags
		if f.out == "" || (f.dtype == "" && f.toward == "") {
			return fmt.Errorf("convert: --out and one of --dtype or --toward are required")
		}
		if f.toward == "" && cmd.Flags().Changed("t") {
			return fmt.Errorf("convert: --t needs --toward")
		}
		m, err := loadModelFile(f.model)
		if err != nil {
			return err
		}
		if f.toward != "" {
			b, err := loadModelFile(f.toward)
			if err != nil {
				return err
			}
			if m, err = modelfile.Interpolate(m, b, f.t); err != nil {
				return err
			}
		}
		if f.dtype != "" {
			if m.DType, err = modelfile.ParseDType(f.dtype); err != nil {
				return err
			}
		}
		if m.Train != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "convert: dropping the training state of step %d\n", m.Train.Step)
			m.Train = nil
		}
		if err := modelfile.Save(f.out, m); err != nil {
			return err
		}
		fi, err := os.Stat(f.out)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d parameters as %s: %s, %.1f MB\n", len(m.Weights), m.DType, f.out, float64(fi.Size())/1e6)
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
	inf.StringVar(&importFlags.dtype, "dtype", "f32", "how the model file stores the weights: f32, bf16 or q8")
	cf := convertCmd.Flags()
	cf.StringVar(&convertFlags.model, "model", "", "ndb model file (default: $NDB_MODEL, else the embedded model)")
	cf.StringVar(&convertFlags.out, "out", "", "ndb model file to write")
	cf.StringVar(&convertFlags.dtype, "dtype", "", "how the model file stores the weights: f32, bf16 or q8 (default: the model's)")
	cf.StringVar(&convertFlags.toward, "toward", "", "model file trained on from --model: write (1-t)*model + t*this")
	cf.Float64Var(&convertFlags.t, "t", 0.5, "with --toward, how far to move, from 0 (the model) to 1 (--toward)")
	rootCmd.AddCommand(exportCmd, importCmd, convertCmd)
}
