package mlm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/optim"
	"github.com/textarmor/textarmor/tensor"
)

// Options are the head's training settings.
type Options struct {
	Epochs int
	Batch  int
	// LR is Adam's peak learning rate: linear warm-up over the first tenth
	// of the steps, then linear decay to 0.
	LR      float64
	Clip    float64 // global gradient-norm clip (0: none)
	Masking Masking
	// Seed fixes each epoch's order and each step's masks and dropout
	// (drawn from sources seeded by the epoch and the step, so that a
	// resumed run draws what an uninterrupted one does).
	Seed int64
	Log  io.Writer
	// Checkpoint is a directory written at each epoch's end and every
	// CheckpointEvery inside one ("" = none); Resume continues from it
	// when it is there. Identity says which run it belongs to: a
	// checkpoint of another run is refused.
	Checkpoint      string
	CheckpointEvery time.Duration
	Resume          bool
	Identity        json.RawMessage
	// stopAfter, in tests, stops after that many steps as a kill would,
	// right after a checkpoint.
	stopAfter int
}

// errStopped is the test stop's error.
var errStopped = errors.New("mlm: stopped")

// DefaultOptions trains a fresh head on a fixed encoder: 2 epochs of
// batches of 32 at lr 1e-3, clip 1, checkpoints every 10 minutes when a
// checkpoint directory is given.
func DefaultOptions() Options {
	return Options{Epochs: 2, Batch: 32, LR: 1e-3, Clip: 1, Masking: DefaultMasking(), CheckpointEvery: 10 * time.Minute}
}

func (o Options) validate() error {
	switch {
	case o.Epochs < 1:
		return fmt.Errorf("epochs %d: must be at least 1", o.Epochs)
	case o.Batch < 1:
		return fmt.Errorf("batch %d: must be at least 1", o.Batch)
	case !(o.LR > 0):
		return fmt.Errorf("lr %g: must be > 0", o.LR)
	case !(o.Clip >= 0):
		return fmt.Errorf("clip %g: must be ≥ 0", o.Clip)
	case o.CheckpointEvery < 0:
		return fmt.Errorf("checkpoint interval %v: must be ≥ 0", o.CheckpointEvery)
	}
	return o.Masking.Validate()
}

// Epoch is one pass's mean loss over the masked pieces and its time.
type Epoch struct {
	Loss    float64 `json:"loss"`
	Pieces  int     `json:"pieces"`
	Seconds float64 `json:"seconds"`
}

// progress is where a run stands, as checkpoints record it.
type progress struct {
	Identity json.RawMessage `json:"identity"`
	Epoch    int             `json:"epoch"` // 0-based, the one under way
	Batch    int             `json:"batch"` // batches of it done
	Sum      float64         `json:"sum"`   // Σ loss·pieces so far in the epoch
	Pieces   int             `json:"pieces"`
	Seconds  float64         `json:"seconds"`
	Done     []Epoch         `json:"done"`
}

// seeded is a source fixed by the run's seed and a counter.
func seeded(seed int64, what, k int) *rand.Rand {
	return rand.New(rand.NewSource(seed*1_000_003 + int64(what)*1_000_000_007 + int64(k)))
}

// Train fits the head (and the top Unfreeze layers) to predict the pieces
// masked in seqs, the texts as the model encodes them.
func Train(ctx context.Context, h *Head, seqs [][]int32, p Pieces, o Options) ([]Epoch, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("no texts to train on")
	}
	perEpoch := (len(seqs) + o.Batch - 1) / o.Batch
	steps := o.Epochs * perEpoch
	sched := optim.LinearWarmupDecay(o.LR, steps/10, steps)
	opt := optim.NewAdam(optim.AdamConfig{LR: o.LR})
	params := h.Params()
	pr := progress{Identity: o.Identity}
	if o.Resume && o.Checkpoint != "" {
		ok, err := loadCheckpoint(o.Checkpoint, params, opt, &pr)
		if err != nil {
			return nil, err
		}
		if ok && o.Log != nil {
			fmt.Fprintf(o.Log, "mlm: resuming epoch %d at batch %d of %d\n", pr.Epoch+1, pr.Batch, perEpoch)
		}
	}
	lastSave, done := time.Now(), 0
	save := func(at progress) error {
		if o.Checkpoint == "" {
			return nil
		}
		lastSave = time.Now()
		return saveCheckpoint(o.Checkpoint, params, opt, at)
	}
	for ; pr.Epoch < o.Epochs; pr.Epoch++ {
		start := time.Now()
		order := seeded(o.Seed, 0, pr.Epoch).Perm(len(seqs))
		for ; pr.Batch < perEpoch; pr.Batch++ {
			if err := ctx.Err(); err != nil {
				return pr.Done, err
			}
			step := pr.Epoch*perEpoch + pr.Batch
			lo := pr.Batch * o.Batch
			part := make([][]int32, 0, o.Batch)
			for _, i := range order[lo:min(lo+o.Batch, len(order))] {
				part = append(part, seqs[i])
			}
			m := h.Corrupt(seeded(o.Seed, 1, step), part, o.Masking, p)
			if len(m.Pos) > 0 {
				t := ag.NewTape()
				t.Train, t.Rng = true, seeded(o.Seed, 2, step)
				loss := t.CrossEntropy(h.Logits(t, m.Batch, m.Pos), m.Targets, nil)
				t.Backward(loss)
				if o.Clip > 0 {
					optim.ClipGradNorm(params, o.Clip)
				}
				opt.SetLR(sched.LR(step, pr.Epoch))
				opt.Step(params)
				optim.ZeroGrad(params)
				pr.Sum, pr.Pieces = pr.Sum+float64(loss.Value.Data[0])*float64(len(m.Pos)), pr.Pieces+len(m.Pos)
			}
			if o.Log != nil && (step+1)%200 == 0 {
				fmt.Fprintf(o.Log, "mlm: epoch %d, step %d of %d: loss %.4f\n", pr.Epoch+1, step+1, steps, pr.Sum/float64(max(pr.Pieces, 1)))
			}
			done++
			stop := o.stopAfter > 0 && done == o.stopAfter
			if stop || o.CheckpointEvery > 0 && time.Since(lastSave) >= o.CheckpointEvery {
				at := pr
				at.Batch++ // this one is done
				at.Seconds += time.Since(start).Seconds()
				if err := save(at); err != nil {
					return pr.Done, err
				}
				if stop {
					return pr.Done, errStopped
				}
			}
		}
		e := Epoch{Loss: pr.Sum / float64(max(pr.Pieces, 1)), Pieces: pr.Pieces, Seconds: pr.Seconds + time.Since(start).Seconds()}
		pr.Done = append(pr.Done, e)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "mlm: epoch %d: loss %.4f over %d masked pieces, %.1f s\n", pr.Epoch+1, e.Loss, e.Pieces, e.Seconds)
		}
		pr.Batch, pr.Sum, pr.Pieces, pr.Seconds = 0, 0, 0, 0
		next := pr
		next.Epoch++
		if err := save(next); err != nil {
			return pr.Done, err
		}
	}
	return pr.Done, nil
}

const optimPrefix = "optimizer/"

func saveCheckpoint(dir string, params []*ag.Param, opt *optim.Adam, pr progress) error {
	cfg, err := json.Marshal(pr)
	if err != nil {
		return err
	}
	ts := map[string]*tensor.Tensor{}
	for _, p := range params {
		ts[p.Name] = p.Value
	}
	for k, v := range opt.State() {
		ts[optimPrefix+k] = v
	}
	return checkpoint.Save(dir, &checkpoint.Bundle{Config: cfg, Tensors: ts})
}

// loadCheckpoint restores a checkpoint of the same run; ok is false when
// there is none.
func loadCheckpoint(dir string, params []*ag.Param, opt *optim.Adam, pr *progress) (bool, error) {
	var saved progress
	b, ok, err := checkpoint.LoadRun(dir, &saved)
	if !ok || err != nil {
		if err != nil {
			err = fmt.Errorf("mlm: cannot resume: %w", err)
		}
		return false, err
	}
	if !bytes.Equal(compact(saved.Identity), compact(pr.Identity)) {
		return false, fmt.Errorf("mlm: cannot resume: %s belongs to another run (%s; this run %s); remove it to start afresh", dir, saved.Identity, pr.Identity)
	}
	weights, state := b.Split(optimPrefix)
	if err := optim.Restore(params, weights, opt, state); err != nil {
		return false, fmt.Errorf("mlm: cannot resume: %s: %w", dir, err)
	}
	*pr = saved
	return true, nil
}

func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// Accuracy is how often the piece that was masked is the head's first
// choice, and among its first ten, over N masked pieces.
type Accuracy struct {
	Top1  float64 `json:"top1"`
	Top10 float64 `json:"top10"`
	N     int     `json:"n"`
}

// Evaluate masks seqs with a seeded draw of rate mk.Rate, every chosen
// piece replaced by [MASK] (the question the attacks ask), and scores the
// head's guesses.
func Evaluate(h *Head, seqs [][]int32, p Pieces, mk Masking, seed int64, batch int) Accuracy {
	mk.Mask, mk.Random = 1, 0
	rng := rand.New(rand.NewSource(seed))
	var a Accuracy
	for lo := 0; lo < len(seqs); lo += max(batch, 1) {
		m := h.Corrupt(rng, seqs[lo:min(lo+max(batch, 1), len(seqs))], mk, p)
		for k, top := range h.TopK(m.Batch, m.Pos, 10) {
			for r, id := range top {
				if int(id) == m.Targets[k] {
					if r == 0 {
						a.Top1++
					}
					a.Top10++
					break
				}
			}
		}
		a.N += len(m.Pos)
	}
	if a.N > 0 {
		a.Top1, a.Top10 = a.Top1/float64(a.N), a.Top10/float64(a.N)
	}
	return a
}
