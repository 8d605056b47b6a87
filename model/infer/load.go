package infer

import (
	"fmt"
	"os"
	"sync"

	"ndb/model/defaultmodel"
	"ndb/model/modelfile"
)

// Load reads a model file (written by `ndb train` or imported) and returns
// a Predictor over it.
func Load(path string) (*Predictor, error) {
	mf, err := modelfile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	return FromModelFile(mf)
}

// FromModelFile returns a Predictor over a loaded model file.
func FromModelFile(mf *modelfile.Model) (*Predictor, error) {
	net, err := mf.Network()
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	return New(net, mf.Tokenizer)
}

// ModelEnv names the environment variable that overrides the embedded
// default model with a model file path.
const ModelEnv = "NDB_MODEL"

var (
	defaultOnce sync.Once
	defaultPred *Predictor
	defaultErr  error
)

// Default returns the shared Predictor of the default model: the file named
// by $NDB_MODEL if set, else the model embedded in the binary
// (model/defaultmodel). It is loaded once; the error says when there is none.
func Default() (*Predictor, error) {
	defaultOnce.Do(func() { defaultPred, defaultErr = loadDefault(os.Getenv(ModelEnv)) })
	return defaultPred, defaultErr
}

func loadDefault(path string) (*Predictor, error) {
	if path != "" {
		return Load(path)
	}
	b, err := defaultmodel.Bytes()
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	mf, err := modelfile.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("infer: embedded model: %w", err)
	}
	return FromModelFile(mf)
}
