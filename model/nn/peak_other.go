//go:build !cgo || purego || !amd64

package nn

import (
	"errors"
	"time"
)

// PeakGFLOPS needs the cgo amd64 build (an FMA loop in assembly); here it
// reports that it cannot measure.
func PeakGFLOPS(d time.Duration) (float64, string, error) {
	return 0, "", errors.New("nn: FMA peak is only measured in the cgo amd64 build")
}
