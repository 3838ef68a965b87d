package mlm

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/optim"
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
	Seed    int64 // the batches' order and the masks
	Log     io.Writer
}

// DefaultOptions trains a fresh head on a fixed encoder: 2 epochs of
// batches of 32 at lr 1e-3, clip 1.
func DefaultOptions() Options {
	return Options{Epochs: 2, Batch: 32, LR: 1e-3, Clip: 1, Masking: DefaultMasking()}
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
	}
	return o.Masking.Validate()
}

// Epoch is one pass's mean loss over the masked pieces and its time.
type Epoch struct {
	Loss    float64 `json:"loss"`
	Pieces  int     `json:"pieces"`
	Seconds float64 `json:"seconds"`
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
	rng := rand.New(rand.NewSource(o.Seed))
	steps := o.Epochs * ((len(seqs) + o.Batch - 1) / o.Batch)
	sched := optim.LinearWarmupDecay(o.LR, steps/10, steps)
	opt := optim.NewAdam(optim.AdamConfig{LR: o.LR})
	params := h.Params()
	var out []Epoch
	step := 0
	for epoch := range o.Epochs {
		start := time.Now()
		var sum float64
		var pieces int
		order := rng.Perm(len(seqs))
		for lo := 0; lo < len(order); lo += o.Batch {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			part := make([][]int32, 0, o.Batch)
			for _, i := range order[lo:min(lo+o.Batch, len(order))] {
				part = append(part, seqs[i])
			}
			m := h.Corrupt(rng, part, o.Masking, p)
			step++
			if len(m.Pos) == 0 {
				continue
			}
			t := ag.NewTape()
			t.Train, t.Rng = true, rng
			loss := t.CrossEntropy(h.Logits(t, m.Batch, m.Pos), m.Targets, nil)
			t.Backward(loss)
			if o.Clip > 0 {
				optim.ClipGradNorm(params, o.Clip)
			}
			opt.SetLR(sched.LR(step-1, epoch))
			opt.Step(params)
			optim.ZeroGrad(params)
			sum, pieces = sum+float64(loss.Value.Data[0])*float64(len(m.Pos)), pieces+len(m.Pos)
			if o.Log != nil && step%200 == 0 {
				fmt.Fprintf(o.Log, "mlm: epoch %d, step %d of %d: loss %.4f\n", epoch+1, step, steps, sum/float64(pieces))
			}
		}
		e := Epoch{Loss: sum / float64(max(pieces, 1)), Pieces: pieces, Seconds: time.Since(start).Seconds()}
		out = append(out, e)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "mlm: epoch %d: loss %.4f over %d masked pieces, %.1f s\n", epoch+1, e.Loss, e.Pieces, e.Seconds)
		}
	}
	return out, nil
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
