package dataset

import (
	"fmt"

	"ndb/dataset/synth"
)

// synthScriptSource is the unbounded stream of synthetic whole scripts
// (synth.GenerateScript): item i is script i of the seeded stream, traced as
// a script (no entry call). Ids are synthscript/<seed>/<i>/0: the trailing
// component makes model/train's SplitKey keep every script its own
// held-out key (synthscript/<seed>/<i>).
type synthScriptSource struct {
	seed int64
	crux CruxEvalSet
}

func (s *synthScriptSource) Name() string { return "synthetic-scripts" }
func (s *synthScriptSource) Len() int     { return -1 }
func (s *synthScriptSource) Dropped() int { return 0 }
func (s *synthScriptSource) Item(i int) (Item, string) {
	p := synth.GenerateScript(s.seed, i)
	if s.crux.Contains(p.Source) {
		return Item{}, SkipCruxEval
	}
	return Item{ID: fmt.Sprintf("synthscript/%d/%d/0", s.seed, i), Program: p}, ""
}
