package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// JSON is the one-line summary `ndb eval next-state --json` prints:
// per_action maps each action to {"em", "n", field fractions (N/A fields
// absent), "em@k"}; forward and inverse pool their actions; horizon maps a
// jump action to its curve over the fraction of states skipped.
func (r *NextStateReport) JSON() map[string]any {
	per := map[string]any{}
	for a, s := range r.PerAction {
		per[a] = s.Summary()
	}
	out := map[string]any{"engine": r.Engine, "per_action": per, "forward": r.Forward.Summary(),
		"inverse": r.Inverse.Summary(), "examples": r.Examples, "errors": r.Errors, "dropped": r.Dropped,
		"seconds": r.Seconds}
	if len(r.ErrorSamples) > 0 {
		out["error_samples"] = r.ErrorSamples
	}
	if len(r.Sources) > 0 {
		bs := map[string]any{}
		for name, ss := range r.Sources {
			bs[name] = ss.JSON()
		}
		out["by_source"] = bs
	}
	if r.K > 1 {
		out["k"] = r.K
	}
	if len(r.HorizonBins) > 0 {
		hz := map[string]any{}
		for a, bins := range r.HorizonBins {
			var pts []map[string]any
			for i, b := range bins {
				if b.N == 0 {
					continue
				}
				p := map[string]any{"skipped_from": float64(i) / HorizonBinCount, "skipped_to": float64(i+1) / HorizonBinCount, "em": b.EM(), "n": b.N}
				if v, ok := b.EMAtK(); ok {
					p["em@k"] = v
				}
				pts = append(pts, p)
			}
			var steps []map[string]any
			for _, h := range sortedInts(r.HorizonSteps[a]) {
				s := r.HorizonSteps[a][h]
				p := map[string]any{"steps": h, "em": s.EM(), "n": s.N}
				if v, ok := s.EMAtK(); ok {
					p["em@k"] = v
				}
				steps = append(steps, p)
			}
			hz[a] = map[string]any{"by_skipped": pts, "by_steps": steps}
		}
		out["horizon"] = hz
	}
	return out
}

// JSON is one source's part of the report's "by_source": the same keys as
// the overall (per_action, forward, inverse, examples), the held-out
// programs drawn from, and "horizon" (every horizon example pooled) when
// measured.
func (s *SourceScores) JSON() map[string]any {
	per := map[string]any{}
	for a, sc := range s.PerAction {
		per[a] = sc.Summary()
	}
	out := map[string]any{"per_action": per, "forward": s.Forward.Summary(), "inverse": s.Inverse.Summary(),
		"examples": s.Examples, "programs": s.Programs}
	if s.Horizon != nil {
		out["horizon"] = s.Horizon.Summary()
	}
	return out
}

// SourceNames lists the report's sources, sorted.
func (r *NextStateReport) SourceNames() []string {
	var out []string
	for n := range r.Sources {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sourcesMarkdown is the per-source table: one row per source (exact match
// per action, forward, inverse, in percent), then the overall row.
func (r *NextStateReport) sourcesMarkdown(b *strings.Builder) {
	actions := AllActions()
	b.WriteString("\nBy source: exact match (%) per action (n in parentheses for forward and inverse)\n\n")
	b.WriteString("| source | programs | examples |")
	for _, a := range actions {
		b.WriteString(" " + a + " |")
	}
	b.WriteString(" forward | inverse |\n| --- | --- | --- |" + strings.Repeat(" --- |", len(actions)+2) + "\n")
	cell := func(s *Score) string {
		if s == nil || s.N == 0 {
			return " - |"
		}
		return fmt.Sprintf(" %.1f |", 100*s.EM())
	}
	dir := func(s *Score) string {
		if s == nil || s.N == 0 {
			return " - |"
		}
		return fmt.Sprintf(" %.1f (%d) |", 100*s.EM(), s.N)
	}
	for _, name := range r.SourceNames() {
		ss := r.Sources[name]
		fmt.Fprintf(b, "| %s | %d | %d |", name, ss.Programs, ss.Examples)
		for _, a := range actions {
			b.WriteString(cell(ss.PerAction[a]))
		}
		b.WriteString(dir(ss.Forward) + dir(ss.Inverse) + "\n")
	}
	fmt.Fprintf(b, "| **all** | | %d |", r.Examples)
	for _, a := range actions {
		b.WriteString(cell(r.PerAction[a]))
	}
	b.WriteString(dir(r.Forward) + dir(r.Inverse) + "\n")
}

func sortedInts[V any](m map[int]V) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func pctCell(v float64, ok bool) string {
	if !ok {
		return "N/A"
	}
	return fmt.Sprintf("%.1f", 100*v)
}

// Markdown is the report's table: one row per action, then forward and
// inverse, in percent; then the horizon curves.
func (r *NextStateReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Next-state exact match (%%), engine %s, %d examples, %.0f s\n\n", r.Engine, r.Examples, r.Seconds)
	head := "| action | n | em | em_evt | em_src | em_locals | em_arg |"
	sep := "| --- | --- | --- | --- | --- | --- | --- |"
	if r.K > 1 {
		head += fmt.Sprintf(" em@%d |", r.K)
		sep += " --- |"
	}
	b.WriteString(head + "\n" + sep + "\n")
	row := func(name string, s *Score) {
		fmt.Fprintf(&b, "| %s | %d | %.1f |", name, s.N, 100*s.EM())
		for _, f := range Fields {
			v, ok := s.Field(f)
			fmt.Fprintf(&b, " %s |", pctCell(v, ok))
		}
		if r.K > 1 {
			v, ok := s.EMAtK()
			fmt.Fprintf(&b, " %s |", pctCell(v, ok))
		}
		b.WriteString("\n")
	}
	for _, a := range SortedActions(r.PerAction) {
		row(a, r.PerAction[a])
	}
	row("**forward**", r.Forward)
	row("**inverse**", r.Inverse)
	if len(r.Sources) > 0 {
		r.sourcesMarkdown(&b)
	}
	if len(r.HorizonBins) > 0 {
		b.WriteString("\nHorizon: exact match (%) of the final jump by fraction of the trace's states it skips (n in parentheses)\n\n")
		b.WriteString("| jump |")
		for i := range HorizonBinCount {
			fmt.Fprintf(&b, " %.1f-%.1f |", float64(i)/HorizonBinCount, float64(i+1)/HorizonBinCount)
		}
		b.WriteString("\n| --- |" + strings.Repeat(" --- |", HorizonBinCount) + "\n")
		for _, a := range SortedActions(r.HorizonBins) {
			fmt.Fprintf(&b, "| %s |", a)
			for _, s := range r.HorizonBins[a] {
				if s.N == 0 {
					b.WriteString(" - |")
				} else {
					fmt.Fprintf(&b, " %.0f (%d) |", 100*s.EM(), s.N)
				}
			}
			b.WriteString("\n")
		}
	}
	if r.Errors > 0 || r.Dropped > 0 {
		fmt.Fprintf(&b, "\n%d predictions failed (counted wrong); %d examples the engine could not follow were dropped.\n", r.Errors, r.Dropped)
	}
	return b.String()
}

// WritePlots writes the next-state figures into dir: accuracy per action
// and field (nextstate_fields.png), forward vs inverse
// (nextstate_direction.png) and the horizon curves (horizon.png, when
// measured). It returns the files written.
func (r *NextStateReport) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	actions := SortedActions(r.PerAction)
	if len(actions) > 0 {
		series := append([]string{"em"}, Fields...)
		vals := make([][]float64, len(series))
		for i, f := range series {
			for _, a := range actions {
				s := r.PerAction[a]
				v := s.EM()
				if f != "em" {
					v, _ = s.Field(f) // N/A plots as 0
				}
				vals[i] = append(vals[i], 100*v)
			}
		}
		p := groupedBars("Next-state exact match by action and field ("+r.Engine+")", actions, series, vals)
		f := filepath.Join(dir, "nextstate_fields.png")
		if err := p.Save(vg.Length(max(7, 1.3*float64(len(actions))))*vg.Inch, 4*vg.Inch, f); err != nil {
			return files, err
		}
		files = append(files, f)

		dirs := []string{"forward", "inverse"}
		dv := make([][]float64, len(series))
		for i, fld := range series {
			for _, s := range []*Score{r.Forward, r.Inverse} {
				v := s.EM()
				if fld != "em" {
					v, _ = s.Field(fld)
				}
				dv[i] = append(dv[i], 100*v)
			}
		}
		p = groupedBars("Forward vs inverse ("+r.Engine+")", dirs, series, dv)
		f = filepath.Join(dir, "nextstate_direction.png")
		if err := p.Save(6*vg.Inch, 4*vg.Inch, f); err != nil {
			return files, err
		}
		files = append(files, f)
	}
	if len(r.HorizonBins) > 0 {
		p := plot.New()
		p.Title.Text = "Horizon: exact match of the final jump (" + r.Engine + ")"
		p.X.Label.Text = "fraction of the trace's states skipped"
		p.Y.Label.Text = "exact match (%)"
		p.Y.Min, p.Y.Max = 0, 100+10*float64(len(r.HorizonBins)+1)
		p.Y.Tick.Marker = percentTicks{}
		p.X.Min, p.X.Max = 0, 1
		p.Legend.Top = true
		for i, a := range SortedActions(r.HorizonBins) {
			var pts plotter.XYs
			for bi, s := range r.HorizonBins[a] {
				if s.N > 0 {
					pts = append(pts, plotter.XY{X: (float64(bi) + 0.5) / HorizonBinCount, Y: 100 * s.EM()})
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return files, err
			}
			l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
			sc.Shape = plotutil.Shape(i)
			p.Add(l, sc)
			p.Legend.Add(a, l, sc)
		}
		p.Add(plotter.NewGrid())
		f := filepath.Join(dir, "horizon.png")
		if err := p.Save(7*vg.Inch, 4*vg.Inch, f); err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// groupedBars draws one group of bars per category, one bar per series.
func groupedBars(title string, cats, series []string, vals [][]float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "%"
	// Room above 100% for the legend.
	p.Y.Min, p.Y.Max = 0, 100+10*float64(len(series)+1)
	p.Y.Tick.Marker = percentTicks{}
	w := vg.Points(float64(min(60, 300/max(1, len(cats)))) / float64(len(series)+1) * 1.6)
	for i, name := range series {
		bars, err := plotter.NewBarChart(plotter.Values(vals[i]), w)
		if err != nil {
			continue
		}
		bars.LineStyle.Width = 0
		bars.Color = plotutil.Color(i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(bars)
		p.Legend.Add(name, bars)
	}
	p.Legend.Top = true
	p.Legend.Left = false
	p.NominalX(cats...)
	p.Add(plotter.NewGrid())
	return p
}

// CruxMarkdown is a table of CruxEval runs, one row each.
func CruxMarkdown(reps []*CruxReport) string {
	var b strings.Builder
	b.WriteString("| task | action | engine | n | pass@1 | exact match | literal | errors | pass@k | majority@k | self-consistency@k | seconds |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range reps {
		k := func(v float64) string {
			if r.K <= 1 {
				return "-"
			}
			return fmt.Sprintf("%.1f (k=%d)", v, r.K)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %.1f | %.1f | %.1f | %d | %s | %s | %s | %.0f |\n", r.Task, r.Action, r.Engine, r.N,
			r.PassAt1, r.ExactMatch, r.Literal, r.Errors, k(r.PassAtK), k(r.Majority), k(r.SelfCons), r.Seconds)
	}
	return b.String()
}

// WriteCruxPlot draws pass@1 and exact match of CruxEval runs.
func WriteCruxPlot(reps []*CruxReport, file string) error {
	var cats []string
	vals := make([][]float64, 2)
	for _, r := range reps {
		cats = append(cats, fmt.Sprintf("%s/%s", r.Task, r.Action))
		vals[0] = append(vals[0], r.PassAt1)
		vals[1] = append(vals[1], r.ExactMatch)
	}
	title := "CruxEval"
	if len(reps) > 0 {
		title += " (" + reps[0].Engine + ")"
	}
	p := groupedBars(title, cats, []string{"pass@1", "exact match"}, vals)
	p.Y.Label.Text = "%"
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}

// percentTicks marks 0 to 100 only: the axis goes higher to leave room for
// the legend.
type percentTicks struct{}

func (percentTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for v := 0.0; v <= 100 && v <= max; v += 10 {
		t := plot.Tick{Value: v}
		if int(v)%50 == 0 {
			t.Label = fmt.Sprintf("%.0f", v)
		}
		out = append(out, t)
	}
	return out
}
