// Command ndb is the neural debugger for Python. Each subcommand lives in its
// own file of this folder and registers itself with rootCmd in init; this
// file only wires them together, and answers `ndb --version`.
package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"ndb/model/defaultmodel"
	"ndb/model/infer"
	"ndb/model/modelfile"
)

var rootCmd = &cobra.Command{
	Use:   "ndb",
	Short: "ndb: the neural debugger for Python",
	Long: `ndb traces Python programs, debugs them with pdb's commands forwards and
backwards, and predicts program states with a language model instead of running them.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func init() {
	// Version makes cobra add --version; the template prints versionText,
	// computed only when asked.
	rootCmd.Version = buildVersion()
	cobra.AddTemplateFunc("ndbVersionText", versionText)
	rootCmd.SetVersionTemplate(`{{ndbVersionText}}`)
	rootCmd.Flags().BoolP("version", "v", false, "print ndb's version, VCS revision, Go version and the embedded model's id")
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print ndb's version, VCS revision, Go version and the embedded model's id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), versionText())
			return err
		},
	})
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ndb:", err)
		os.Exit(1)
	}
}

// buildVersion is the module version of this build ("(devel)" for a build
// from a checkout), from the build information Go embeds.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// versionText is what `ndb --version` and `ndb version` print: the module
// version, the VCS revision when the build recorded one, the Go version,
// and the model the model engine starts with. The model is identified from
// its file header and trailing checksum only; no weights are loaded.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ndb %s\n", buildVersion())
	if bi, ok := debug.ReadBuildInfo(); ok {
		set := map[string]string{}
		for _, s := range bi.Settings {
			set[s.Key] = s.Value
		}
		if rev := set["vcs.revision"]; rev != "" {
			if set["vcs.modified"] == "true" {
				rev += " (modified)"
			}
			if t := set["vcs.time"]; t != "" {
				rev += ", committed " + t
			}
			fmt.Fprintf(&b, "revision: %s\n", rev)
		} else {
			b.WriteString("revision: not recorded (built outside a git checkout or with -buildvcs=false)\n")
		}
	}
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if p := os.Getenv(infer.ModelEnv); p != "" {
		id, err := modelIDOfFile(p)
		if err != nil {
			id = "unreadable: " + err.Error()
		}
		fmt.Fprintf(&b, "model: $%s=%s, %s\n", infer.ModelEnv, p, id)
	}
	f, err := defaultmodel.FS.Open(defaultmodel.FileName)
	if err != nil {
		fmt.Fprintf(&b, "embedded model: none\n")
		return b.String()
	}
	defer f.Close()
	id, err := modelID(f.(fileAt))
	if err != nil {
		id = "unreadable: " + err.Error()
	}
	fmt.Fprintf(&b, "embedded model: model/defaultmodel/%s, %s\n", defaultmodel.FileName, id)
	return b.String()
}

// fileAt is a model file opened for reading at offsets: an *os.File or an
// embedded file.
type fileAt interface {
	io.ReaderAt
	Stat() (fs.FileInfo, error)
}

func modelIDOfFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return modelID(f)
}

// modelID names a model file by its trailing SHA-256 checksum (the first
// 12 hex digits) and its header: parameters, layers, width, vocabulary and
// the config name when the file records one. It reads the header and the
// last 32 bytes only (the layout is in model/modelfile).
func modelID(f fileAt) (string, error) {
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := st.Size()
	prefix := make([]byte, 16)
	if _, err := f.ReadAt(prefix, 0); err != nil || string(prefix[:8]) != modelfile.Magic {
		return "", modelfile.ErrNotModelFile
	}
	hlen := int64(binary.LittleEndian.Uint32(prefix[12:]))
	if size < 16+hlen+32 || hlen > 1<<24 {
		return "", modelfile.ErrTruncated
	}
	header := make([]byte, hlen)
	sum := make([]byte, 32)
	if _, err := f.ReadAt(header, 16); err != nil {
		return "", err
	}
	if _, err := f.ReadAt(sum, size-32); err != nil {
		return "", err
	}
	var h struct {
		Config struct {
			Dim    int `json:"hidden_size"`
			Layers int `json:"num_hidden_layers"`
			Vocab  int `json:"vocab_size"`
		} `json:"config"`
		Params int64             `json:"params"`
		Meta   map[string]string `json:"meta"`
	}
	if err := json.Unmarshal(header, &h); err != nil {
		return "", fmt.Errorf("%w: header: %v", modelfile.ErrCorrupt, err)
	}
	id := fmt.Sprintf("checksum %s, %d parameters (%d layers, width %d, vocabulary %d)",
		hex.EncodeToString(sum)[:12], h.Params, h.Config.Layers, h.Config.Dim, h.Config.Vocab)
	if name := h.Meta["config_name"]; name != "" {
		id += ", config " + name
	}
	return id, nil
}
