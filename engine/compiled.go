package engine

import (
	"context"
	"crypto/sha256"
	"sync"

	"ndb/internal/pysource"
	"ndb/tracer"
)

// compiledPrograms remembers, per interpreter and program text, what the
// program's compiled code says about its lines (tracer.Compile; nil:
// python cannot say). Evaluation runs ask for the same few programs
// thousands of times.
var compiledPrograms = struct {
	sync.Mutex
	m map[[32]byte]*pysource.Compiled
}{m: map[[32]byte]*pysource.Compiled{}}

// maxCompiled bounds compiledPrograms (a server sees new programs for ever).
const maxCompiled = 4096

// compiledProgram is tracer.Compile for one program, asked once per
// interpreter and text; nil where python is "" or cannot answer (no
// sandbox, a text that does not compile): the model engine then reads the
// text alone. The lock is held while python answers: a prediction of the
// same program waits for the answer it would ask for again.
func compiledProgram(ctx context.Context, python, src string) *pysource.Compiled {
	if python == "" {
		return nil
	}
	key := sha256.Sum256([]byte(python + "\x00" + src))
	compiledPrograms.Lock()
	defer compiledPrograms.Unlock()
	if c, ok := compiledPrograms.m[key]; ok {
		return c
	}
	var c *pysource.Compiled
	if got, err := tracer.Compile(ctx, python, []string{src}); err == nil {
		c = got[0]
	} else if ctx.Err() != nil {
		return nil // not the program's answer: ask again next time
	}
	if len(compiledPrograms.m) >= maxCompiled {
		clear(compiledPrograms.m)
	}
	compiledPrograms.m[key] = c
	return c
}
