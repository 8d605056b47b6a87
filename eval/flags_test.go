package eval

import "flag"

var (
	fullCrux = flag.Bool("full", false, "run the real-engine check on all CruxEval items")
	update   = flag.Bool("update", false, "rewrite golden files")
)
