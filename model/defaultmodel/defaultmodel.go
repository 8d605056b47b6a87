// Package defaultmodel embeds the model that ships with ndb: the file
// model/ndb.model of this folder, when present. The folder always holds a
// README, so the package builds with or without a model in it.
package defaultmodel

import (
	"embed"
	"errors"
	"io/fs"
)

// FileName is the embedded model's path inside FS.
const FileName = "model/ndb.model"

// FS holds this folder's model/ directory.
//
//go:embed model
var FS embed.FS

// ErrAbsent says this build of ndb embeds no model.
var ErrAbsent = errors.New("this ndb was built without an embedded model (model/defaultmodel/model/ndb.model); train one with `ndb train` and pass it with --model, or set NDB_MODEL")

// Bytes returns the embedded model file, or ErrAbsent.
func Bytes() ([]byte, error) {
	b, err := FS.ReadFile(FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrAbsent
	}
	return b, err
}
