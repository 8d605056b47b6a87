// Command plotcurve draws next-state exact match against training tokens
// from `ndb eval next-state --json` lines, for docs/default-model.md.
//
//	go run ./scripts/plotcurve -out docs/img/accuracy-vs-tokens.png TOKENS=FILE.json ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

type summary struct {
	Forward struct{ EM float64 } `json:"forward"`
	Inverse struct{ EM float64 } `json:"inverse"`
}

func main() {
	out := flag.String("out", "accuracy-vs-tokens.png", "PNG to write")
	flag.Parse()
	var fwd, inv plotter.XYs
	for _, arg := range flag.Args() {
		tok, file, ok := strings.Cut(arg, "=")
		if !ok {
			fail(fmt.Errorf("argument %q: want TOKENS=FILE", arg))
		}
		n, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			fail(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			fail(err)
		}
		var s summary
		if err := json.Unmarshal(b, &s); err != nil {
			fail(fmt.Errorf("%s: %w", file, err))
		}
		fwd = append(fwd, plotter.XY{X: n / 1e6, Y: 100 * s.Forward.EM})
		inv = append(inv, plotter.XY{X: n / 1e6, Y: 100 * s.Inverse.EM})
	}
	p := plot.New()
	p.Title.Text = "Next-state exact match on held-out MBPP+ functions"
	p.X.Label.Text = "training tokens (millions)"
	p.Y.Label.Text = "exact match (%)"
	p.Y.Min, p.Y.Max = 0, 100
	if err := plotutil.AddLinePoints(p, "forward", fwd, "inverse", inv); err != nil {
		fail(err)
	}
	if err := p.Save(6*vg.Inch, 4*vg.Inch, *out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "plotcurve:", err)
	os.Exit(1)
}
