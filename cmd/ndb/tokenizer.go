package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"ndb/model/modelfile"
	"ndb/model/tokenizer"
)

// tokenizerCmd groups the tokenizer's commands.
var tokenizerCmd = &cobra.Command{
	Use:   "tokenizer",
	Short: "Train and inspect the byte-level BPE tokenizer",
}

var tokenizerTrainFlags struct {
	data  string
	vocab int
	out   string
	pre   tokenizer.Pretokenizer
}

var tokenizerTrainCmd = &cobra.Command{
	Use:   "train --data DIR|FILE --vocab N --out FILE [--pretokenizer ndb|llama3]",
	Short: "Train a tokenizer on `ndb gen` shards (.jsonl with a text field) or .txt files",
	Long: `Train learns byte-level BPE merges until the vocabulary (256 bytes, merges and
the special tokens of docs/format.md) has N tokens, or no pair of tokens occurs twice.
DIR is searched for .jsonl, .jsonl.gz and .txt files; a FILE is read as one of those.

--pretokenizer chooses how text is split into pieces before merging: ndb (the default:
identifiers, indentation with its line break) or llama3 (Llama 3's regex, which llama.cpp
implements: a GGUF export then tokenizes text in llama.cpp as ndb does; docs/tokenizer.md).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := tokenizerTrainFlags
		if f.data == "" || f.out == "" {
			return fmt.Errorf("tokenizer train: --data and --out are required")
		}
		files, err := tokenizer.CorpusFiles(f.data)
		if err != nil {
			return err
		}
		var readErr error
		var texts, size int
		seq := tokenizer.Texts(files, &readErr)
		counted := func(yield func(string) bool) {
			for s := range seq {
				texts++
				size += len(s)
				if !yield(s) {
					return
				}
			}
		}
		start := time.Now()
		tok, err := tokenizer.TrainWith(counted, f.vocab, tokenizer.SpecialTokens, f.pre)
		if readErr != nil {
			return readErr
		}
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		if err := tok.Save(f.out); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "trained on %d texts (%.1f MB) from %d files in %.2fs (%.1f MB/s): %d tokens (%d merges, %d special), pre-tokenizer %s -> %s\n",
			texts, float64(size)/1e6, len(files), secs, float64(size)/1e6/secs, tok.VocabSize(), tok.NumMerges(), len(tok.Specials()), tok.Pretokenizer(), f.out)
		if tok.VocabSize() < f.vocab {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: the corpus had no more pairs occurring %d times; the vocabulary is smaller than %d\n", tokenizer.MinPairCount, f.vocab)
		}
		return nil
	},
}

var tokenizerEncodeFlags struct {
	tokenizer string
	json      bool
}

var tokenizerEncodeCmd = &cobra.Command{
	Use:   "encode --tokenizer FILE [TEXT]",
	Short: "Show how a text splits into tokens (TEXT or standard input)",
	Long: `Encode prints each token as id and text. FILE is a tokenizer file or a model file.
With --json it prints the ids as one JSON array.`,
	Args: cobra.MaximumNArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		tok, err := loadTokenizer(tokenizerEncodeFlags.tokenizer)
		if err != nil {
			return err
		}
		var text string
		if len(args) == 1 {
			text = args[0]
		} else {
			data, err := readAllStdin()
			if err != nil {
				return err
			}
			text = data
		}
		ids := tok.Encode(text)
		out := cmd.OutOrStdout()
		if tokenizerEncodeFlags.json {
			return json.NewEncoder(out).Encode(ids)
		}
		for _, id := range ids {
			t, _ := tok.Token(id)
			fmt.Fprintf(out, "%6d %q\n", id, t)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%d bytes -> %d tokens\n", len(text), len(ids))
		return nil
	},
}

// pretokenizerChoices documents --pretokenizer of tokenizer train and train.
const pretokenizerChoices = "ndb (splits code into identifiers, numbers, indentation) or llama3 (llama.cpp's llama-bpe, for GGUF exports)"

// loadTokenizer reads a tokenizer file, or the tokenizer inside a model file.
func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	if path == "" {
		return nil, fmt.Errorf("--tokenizer is required")
	}
	head := make([]byte, len(modelfile.Magic))
	if f, err := os.Open(path); err == nil {
		f.Read(head)
		f.Close()
	}
	if string(head) == modelfile.Magic {
		m, err := modelfile.Load(path)
		if err != nil {
			return nil, err
		}
		return m.Tokenizer, nil
	}
	return tokenizer.Load(path)
}

func readAllStdin() (string, error) {
	data, err := io.ReadAll(os.Stdin)
	return string(data), err
}

func init() {
	tf := tokenizerTrainCmd.Flags()
	tf.StringVar(&tokenizerTrainFlags.data, "data", "", "`PATH`: a folder of ndb gen shards, or one .jsonl/.txt file")
	tf.IntVar(&tokenizerTrainFlags.vocab, "vocab", 4096, "vocabulary size, bytes and special tokens included")
	tf.StringVar(&tokenizerTrainFlags.out, "out", "", "tokenizer file to write (JSON)")
	tf.TextVar(&tokenizerTrainFlags.pre, "pretokenizer", tokenizer.PretokenizerNDB, "`NAME` of the pre-tokenizer: "+pretokenizerChoices)
	ef := tokenizerEncodeCmd.Flags()
	ef.StringVar(&tokenizerEncodeFlags.tokenizer, "tokenizer", "", "tokenizer file or model file")
	ef.BoolVar(&tokenizerEncodeFlags.json, "json", false, "print the ids as a JSON array")
	tokenizerCmd.AddCommand(tokenizerTrainCmd, tokenizerEncodeCmd)
	rootCmd.AddCommand(tokenizerCmd)
}
