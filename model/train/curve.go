package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// LogRecord is one line of the loss log (JSONL): a training step, and the
// validation loss at the steps where it was measured.
type LogRecord struct {
	Step       int      `json:"step"`   // 1-based: the number of optimizer steps done
	Tokens     int64    `json:"tokens"` // training tokens seen so far
	LR         float64  `json:"lr"`
	Loss       float64  `json:"loss"`
	GradNorm   float64  `json:"grad_norm"`
	ValLoss    *float64 `json:"val_loss,omitempty"`
	TokensPerS float64  `json:"tokens_per_s"`
	ElapsedS   float64  `json:"elapsed_s"`
}

// ReadLog reads a loss log written by the trainer.
func ReadLog(path string) ([]LogRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []LogRecord
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var r LogRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// PlotCurve draws training and validation loss against training tokens
// into a PNG (or SVG/PDF, by the extension of path).
func PlotCurve(recs []LogRecord, title, path string) error {
	if len(recs) == 0 {
		return fmt.Errorf("plot: no training steps logged")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "training tokens"
	p.Y.Label.Text = "loss (nats/token)"
	var trainPts, valPts plotter.XYs
	for _, r := range recs {
		trainPts = append(trainPts, plotter.XY{X: float64(r.Tokens), Y: r.Loss})
		if r.ValLoss != nil {
			valPts = append(valPts, plotter.XY{X: float64(r.Tokens), Y: *r.ValLoss})
		}
	}
	tl, err := plotter.NewLine(trainPts)
	if err != nil {
		return err
	}
	tl.Color = plotter.DefaultLineStyle.Color
	p.Add(tl)
	p.Legend.Add("train", tl)
	if len(valPts) > 0 {
		vl, err := plotter.NewLine(valPts)
		if err != nil {
			return err
		}
		vl.Width = vg.Points(2)
		vl.Color = colorRed
		p.Add(vl)
		p.Legend.Add("validation (held-out programs)", vl)
		if len(valPts) < 50 {
			sc, err := plotter.NewScatter(valPts)
			if err == nil {
				sc.Color = colorRed
				p.Add(sc)
			}
		}
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

var colorRed = color.RGBA{R: 200, G: 30, B: 30, A: 255}
