package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"ndb/model/nn"
)

// Backend is the network and optimizer under training, as the loop sees
// them. The nn adapter (netBackend) implements it; tests may use others.
type Backend interface {
	// TrainStep runs forward and backward on one batch (B rows of T
	// tokens), clips the gradient to clipNorm, applies one AdamW step at
	// learning rate lr and returns the batch's mean loss and the gradient
	// norm before clipping.
	TrainStep(inputs, targets []int32, B, T int, lr, clipNorm float64) (loss, gradNorm float64, err error)
	// EvalLoss is the mean cross-entropy of a batch, without side effects.
	EvalLoss(inputs, targets []int32, B, T int) (float64, error)
}

// Options are the hyperparameters of one training run. They are stored in
// every checkpoint, and a resumed run takes them from there.
type Options struct {
	Batch       int     `json:"batch"`        // B: rows per step
	Seq         int     `json:"seq"`          // T: tokens per row
	Steps       int     `json:"steps"`        // total optimizer steps of the schedule
	LR          float64 `json:"lr"`           // peak learning rate
	MinLR       float64 `json:"min_lr"`       // learning rate at the end of the cosine
	Warmup      int     `json:"warmup"`       // linear warmup steps
	WeightDecay float64 `json:"weight_decay"` // AdamW decoupled weight decay
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	ClipNorm    float64 `json:"clip_norm"`         // global gradient-norm clip
	Seed        uint64  `json:"seed"`              // weights init and batch sampling
	EvalEvery   int     `json:"eval_every"`        // steps between validation losses
	EvalWindows int     `json:"eval_windows"`      // validation windows per evaluation (0: all)
	SaveEvery   int     `json:"save_every"`        // steps between checkpoints (0: only at the end)
	Align       bool    `json:"align,omitempty"`   // windows start at document starts (the first token of train.bin marks them)
	LossOn      string  `json:"loss_on,omitempty"` // "all" tokens ("" too) or "frames" only (FrameTargets)
}

// The values of Options.LossOn.
const (
	LossOnAll    = "all"
	LossOnFrames = "frames"
)

// DefaultOptions are the defaults of `ndb train`.
func DefaultOptions() Options {
	return Options{Batch: 8, Seq: 256, Steps: 1000, LR: 3e-3, MinLR: 3e-4, Warmup: 100,
		WeightDecay: 0.1, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, ClipNorm: 1.0, Seed: 1,
		EvalEvery: 100, EvalWindows: 64, SaveEvery: 500}
}

// Validate reports options that cannot train.
func (o Options) Validate() error {
	switch {
	case o.Batch <= 0 || o.Seq <= 0:
		return fmt.Errorf("train: batch %d and seq %d must be positive", o.Batch, o.Seq)
	case o.Steps <= 0:
		return fmt.Errorf("train: steps %d must be positive", o.Steps)
	case o.LR <= 0 || o.MinLR < 0 || o.MinLR > o.LR:
		return fmt.Errorf("train: need 0 <= min_lr (%g) <= lr (%g), lr > 0", o.MinLR, o.LR)
	case o.Warmup < 0:
		return fmt.Errorf("train: warmup %d is negative", o.Warmup)
	case o.LossOn != "" && o.LossOn != LossOnAll && o.LossOn != LossOnFrames:
		return fmt.Errorf("train: loss on %q: want %q or %q", o.LossOn, LossOnAll, LossOnFrames)
	}
	return nil
}

// LRAt is the learning rate of step s (0-based), nn.LR's schedule: linear
// warmup from LR/Warmup to LR over Warmup steps, then cosine decay
// lr = MinLR + (LR-MinLR)/2 * (1 + cos(pi * (s-Warmup)/(Steps-Warmup))),
// reaching MinLR at step Steps (and MinLR after it).
func (o Options) LRAt(s int) float64 { return nn.LR(s, o.Warmup, o.Steps, o.LR, o.MinLR) }

// State is where a run stands: saved with every checkpoint.
type State struct {
	Options Options     `json:"options"`
	Step    int         `json:"step"`   // optimizer steps done
	Tokens  int64       `json:"tokens"` // training tokens seen
	Elapsed float64     `json:"elapsed_s"`
	Data    Meta        `json:"data"` // the packed data trained on
	Log     []LogRecord `json:"-"`
}

// Hooks are the side effects of a run: checkpoints and the loss log.
type Hooks struct {
	// Checkpoint saves the model and the state; called every SaveEvery
	// steps and at the end.
	Checkpoint func(st *State) error
	// Log receives every record (nil: none kept).
	Log func(LogRecord) error
	// Progress is where the progress bar goes (nil: none).
	Progress io.Writer
	// Deadline stops the run early at a wall-clock time (zero: none); the
	// schedule is not changed, so this is for --time runs sized beforehand.
	Deadline time.Time
	// StopAt ends the run after this step (0: none) with a checkpoint, as
	// an interruption would; the schedule is not changed.
	StopAt int
}

// Run trains from st.Step to st.Options.Steps on the packed data. The batch
// of step s is a pure function of (seed, s), the model state is the
// backend's, so stopping after any checkpoint and running again from it
// gives the same losses as never stopping.
func Run(ctx context.Context, be Backend, data *Packed, st *State, h Hooks) error {
	o := st.Options
	if err := o.Validate(); err != nil {
		return err
	}
	n := len(data.Train)
	if n < o.Seq+1 {
		return fmt.Errorf("train: %d training tokens cannot fill one window of %d (lower --seq or add data)", n, o.Seq+1)
	}
	valOffs := ValOffsets(len(data.Val), o.Seq, o.EvalWindows)
	var trainMask, valMask []bool
	if o.LossOn == LossOnFrames {
		if data.TrainFrames == nil || data.ValFrames == nil {
			return errors.New("train: loss on frames needs the packed data's frame marks (Packed.MarkFrames)")
		}
		trainMask, valMask = data.TrainFrames, data.ValFrames
	}
	inputs := make([]int32, o.Batch*o.Seq)
	targets := make([]int32, o.Batch*o.Seq)

	var bar *progressbar.ProgressBar
	if h.Progress != nil {
		bar = progressbar.NewOptions(o.Steps,
			progressbar.OptionSetWriter(h.Progress),
			progressbar.OptionSetDescription("train"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(h.Progress) }),
		)
		bar.Set(st.Step)
	}
	start := time.Now()
	elapsed0 := st.Elapsed
	lastVal := math.NaN()
	runTokens := int64(0)
	var starts []int
	if o.Align {
		starts = DocStarts(data.Train, data.Train[0], o.Seq)
	}
	for st.Step < o.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !h.Deadline.IsZero() && time.Now().After(h.Deadline) {
			break
		}
		if h.StopAt > 0 && st.Step >= h.StopAt {
			break
		}
		s := st.Step
		var offs []int
		var err error
		if o.Align {
			offs, err = AlignedOffsets(o.Seed, s, o.Batch, starts)
		} else {
			offs, err = BatchOffsets(o.Seed, s, o.Batch, o.Seq, n)
		}
		if err != nil {
			return err
		}
		FillBatch(data.Train, trainMask, offs, o.Seq, inputs, targets)
		lr := o.LRAt(s)
		loss, gnorm, err := be.TrainStep(inputs, targets, o.Batch, o.Seq, lr, o.ClipNorm)
		if err != nil {
			return fmt.Errorf("train: step %d: %w", s, err)
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("train: step %d: loss is %v (lower --lr?)", s, loss)
		}
		st.Step++
		st.Tokens += int64(o.Batch * o.Seq)
		runTokens += int64(o.Batch * o.Seq)
		wall := time.Since(start).Seconds()
		st.Elapsed = elapsed0 + wall
		rec := LogRecord{Step: st.Step, Tokens: st.Tokens, LR: lr, Loss: loss, GradNorm: gnorm,
			TokensPerS: float64(runTokens) / math.Max(wall, 1e-9), ElapsedS: st.Elapsed}
		if len(valOffs) > 0 && (st.Step%max(o.EvalEvery, 1) == 0 || st.Step == o.Steps) {
			v, err := EvalLoss(be, data.Val, valMask, valOffs, o.Batch, o.Seq)
			if err != nil {
				return err
			}
			rec.ValLoss = &v
			lastVal = v
		}
		st.Log = append(st.Log, rec)
		if h.Log != nil {
			if err := h.Log(rec); err != nil {
				return err
			}
		}
		if bar != nil {
			desc := fmt.Sprintf("loss %.3f", loss)
			if !math.IsNaN(lastVal) {
				desc += fmt.Sprintf(" val %.3f", lastVal)
			}
			desc += fmt.Sprintf(" %.0f tok/s", rec.TokensPerS)
			bar.Describe(desc)
			bar.Set(st.Step)
		}
		if h.Checkpoint != nil && o.SaveEvery > 0 && st.Step%o.SaveEvery == 0 && st.Step < o.Steps {
			if err := h.Checkpoint(st); err != nil {
				return fmt.Errorf("train: checkpoint at step %d: %w", st.Step, err)
			}
		}
	}
	if bar != nil {
		bar.Finish()
	}
	if h.Checkpoint != nil {
		if err := h.Checkpoint(st); err != nil {
			return fmt.Errorf("train: final checkpoint: %w", err)
		}
	}
	return nil
}

// EvalLoss is the mean loss per trained target over the validation windows
// at offs (mask as in FillBatch), evaluated B windows at a time (the last
// batch may be smaller).
func EvalLoss(be Backend, val []uint32, mask []bool, offs []int, B, T int) (float64, error) {
	if len(offs) == 0 {
		return 0, errors.New("train: no validation windows")
	}
	var sum float64
	var count int
	inputs := make([]int32, B*T)
	targets := make([]int32, B*T)
	for i := 0; i < len(offs); i += B {
		chunk := offs[i:min(i+B, len(offs))]
		FillBatch(val, mask, chunk, T, inputs, targets)
		l, err := be.EvalLoss(inputs[:len(chunk)*T], targets[:len(chunk)*T], len(chunk), T)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, t := range targets[:len(chunk)*T] {
			if t >= 0 {
				n++
			}
		}
		sum += l * float64(n)
		count += n
	}
	if count == 0 {
		return 0, errors.New("train: the validation windows hold no trained target")
	}
	return sum / float64(count), nil
}

// AppendLog returns a Hooks.Log that appends JSONL records to path.
func AppendLog(path string) (func(LogRecord) error, func() error, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	enc := json.NewEncoder(f)
	return func(r LogRecord) error { return enc.Encode(r) }, f.Close, nil
}
