//go:build !cgo || purego || !amd64

package nn

import (
	"errors"
	"time"
)

// MeasurePeak needs the cgo amd64 build (an FMA loop in assembly); here it
// reports that it cannot measure.
func MeasurePeak(d time.Duration) (Peak, error) {
	return Peak{}, errors.New("nn: FMA peak is only measured in the cgo amd64 build")
}
