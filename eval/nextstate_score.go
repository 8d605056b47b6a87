package eval

import (
	"encoding/json"
	"io"

	"ndb/debugger"
	"ndb/format"
)

// Scoring next-state predictions: the report's tallies per action,
// direction, source and horizon, and the --dump lines.

// NextStateReport holds the scores of a run.
type NextStateReport struct {
	Engine    string            `json:"engine"`
	PerAction map[string]*Score `json:"-"`
	Forward   *Score            `json:"-"`
	Inverse   *Score            `json:"-"`
	// Horizon: by jump action, scores per bin of the fraction of states
	// skipped (10 bins of 0.1) and per number of inserted steps.
	HorizonBins  map[string][]*Score       `json:"-"`
	HorizonSteps map[string]map[int]*Score `json:"-"`
	// Sources: per source (CollectSources), the same scores; nil when the
	// examples carry no source.
	Sources      map[string]*SourceScores `json:"-"`
	Dropped      int                      `json:"dropped"`                 // examples the engine's route could not follow
	Errors       int                      `json:"errors"`                  // predictions that failed (counted as wrong)
	ErrorSamples []string                 `json:"error_samples,omitempty"` // the first distinct failure messages
	K            int                      `json:"k,omitempty"`
	Seconds      float64                  `json:"seconds"`
	Examples     int                      `json:"examples"`
}

// SourceScores are one source's scores in a multi-source run.
type SourceScores struct {
	Programs  int
	Examples  int
	PerAction map[string]*Score
	Forward   *Score
	Inverse   *Score
	Horizon   *Score // every horizon example pooled (nil: none)
}

// sourceScores returns the scores of source name, made on first use.
func (r *NextStateReport) sourceScores(name string) *SourceScores {
	if r.Sources == nil {
		r.Sources = map[string]*SourceScores{}
	}
	s := r.Sources[name]
	if s == nil {
		s = &SourceScores{PerAction: map[string]*Score{}, Forward: &Score{}, Inverse: &Score{}}
		r.Sources[name] = s
	}
	return s
}

// HorizonBinCount is the number of bins of the horizon curves.
const HorizonBinCount = 10

// add counts one scored example: per source (when it has one), then in its
// horizon bin and step count, or under its action. withK counts exact
// match@k too.
func (r *NextStateReport) add(ex *Example, m Match, anyExact, withK bool) {
	if ex.Source != "" {
		r.Sources[ex.Source].add(ex, m, anyExact, withK)
	}
	if ex.Horizon {
		bins := r.HorizonBins[ex.Action]
		if bins == nil {
			for range HorizonBinCount {
				bins = append(bins, &Score{})
			}
			r.HorizonBins[ex.Action] = bins
		}
		bin := min(int(ex.Skipped*HorizonBinCount), HorizonBinCount-1)
		bins[bin].Add(m)
		if r.HorizonSteps[ex.Action] == nil {
			r.HorizonSteps[ex.Action] = map[int]*Score{}
		}
		s := r.HorizonSteps[ex.Action][ex.Steps]
		if s == nil {
			s = &Score{}
			r.HorizonSteps[ex.Action][ex.Steps] = s
		}
		s.Add(m)
		if withK {
			bins[bin].AddK(anyExact)
			s.AddK(anyExact)
		}
	} else {
		s := r.PerAction[ex.Action]
		if s == nil {
			s = &Score{}
			r.PerAction[ex.Action] = s
		}
		s.Add(m)
		if withK {
			s.AddK(anyExact)
		}
	}
}

// add counts one scored example of this source.
func (s *SourceScores) add(ex *Example, m Match, anyExact, withK bool) {
	var sc []*Score
	if ex.Horizon {
		if s.Horizon == nil {
			s.Horizon = &Score{}
		}
		sc = []*Score{s.Horizon}
	} else {
		a := s.PerAction[ex.Action]
		if a == nil {
			a = &Score{}
			s.PerAction[ex.Action] = a
		}
		dir := s.Forward
		if debugger.Action(ex.Action).Inverse() {
			dir = s.Inverse
		}
		sc = []*Score{a, dir}
	}
	for _, x := range sc {
		x.Add(m)
		if withK {
			x.AddK(anyExact)
		}
	}
}

// dumpExample writes one example as a JSON line for NextStateOptions.Dump.
func dumpExample(w io.Writer, ex *Example, pred, want format.Frame, m Match) error {
	prompt, err := format.PromptText(ex.Traj.Source, ex.Traj.Frames[:ex.Cut+1], ex.Traj.Steps[:ex.Cut+1])
	if err != nil {
		return err
	}
	predText := ""
	if pred.Kind.Valid() {
		predText = format.FrameText(pred)
	}
	line, err := json.Marshal(map[string]any{"action": ex.Action, "horizon": ex.Horizon, "exact": m.Exact,
		"fields": m.Fields, "prompt": prompt, "want": format.FrameText(want), "pred": predText})
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}
