package lstmlm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"slices"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/optim"
	"github.com/textarmor/textarmor/tensor"
)

// TrainOptions are the training settings (spgd.md §4.2).
type TrainOptions struct {
	Epochs int
	// Batch is the number of streams the corpus is cut into, each read
	// in BPTT-word segments (the state carries across segments; the
	// gradient stops at their starts).
	Batch, BPTT int
	// LR is Adam's rate; Clip the global gradient-norm clip; Decay
	// multiplies the rate after an epoch whose validation perplexity did
	// not improve (spec: 0.9999; 1 = never).
	LR, Clip, Decay float64
	// Valid are texts (ids, no EOS) for the end-of-epoch perplexity.
	Valid [][]int32
	// Out is the model directory; Out+".ckpt" the checkpoint, written at
	// each epoch's end and every CheckpointEvery inside one (0: epoch
	// ends only). Resume continues from it.
	Out             string
	Resume          bool
	CheckpointEvery time.Duration
	Progress        io.Writer
	// Info goes into the model's training record.
	Info map[string]any
	// stopAfter, in tests, stops the run after that many segments as a
	// kill would, right after a checkpoint.
	stopAfter int
}

// errStopped is the test stop's error.
var errStopped = errors.New("lstmlm: stopped")

// DefaultTrainOptions are the spec's: one epoch of 32 streams, BPTT 35,
// Adam 1e-3, clip 5, decay 0.9999, checkpoints every 10 minutes.
func DefaultTrainOptions() TrainOptions {
	return TrainOptions{Epochs: 1, Batch: 32, BPTT: 35, LR: 1e-3, Clip: 5, Decay: 0.9999, CheckpointEvery: 10 * time.Minute}
}

// Validate checks the options' ranges.
func (o TrainOptions) Validate() error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	switch {
	case o.Epochs < 1:
		return fmt.Errorf("lstmlm: --epochs %d must be at least 1", o.Epochs)
	case o.Batch < 1:
		return fmt.Errorf("lstmlm: --batch %d must be at least 1", o.Batch)
	case o.BPTT < 1 || o.BPTT > 10000:
		return fmt.Errorf("lstmlm: --bptt %d must be in [1, 10000]", o.BPTT)
	case bad(o.LR) || o.LR <= 0:
		return fmt.Errorf("lstmlm: --lr %g must be positive", o.LR)
	case bad(o.Clip) || o.Clip < 0:
		return fmt.Errorf("lstmlm: --clip %g must be ≥ 0 (0 = off)", o.Clip)
	case bad(o.Decay) || o.Decay <= 0 || o.Decay > 1:
		return fmt.Errorf("lstmlm: --lr-decay %g must be in (0, 1]", o.Decay)
	case o.Out == "":
		return errors.New("lstmlm: no output directory")
	case o.CheckpointEvery < 0:
		return fmt.Errorf("lstmlm: --checkpoint-every %v must be ≥ 0", o.CheckpointEvery)
	}
	return nil
}

// Epoch is one epoch's record.
type Epoch struct {
	Epoch    int     `json:"epoch"`
	TrainPPL float64 `json:"train_ppl"`
	ValidPPL float64 `json:"valid_ppl,omitempty"`
	LR       float64 `json:"lr"`
	Words    int     `json:"words"`
	Seconds  float64 `json:"seconds"`
}

// Result is a training run's record.
type Result struct {
	Epochs []Epoch `json:"epochs"`
}

// progress is the checkpointed position of a run.
type progress struct {
	Identity  json.RawMessage `json:"identity"`
	Epoch     int             `json:"epoch"`      // 1-based, the epoch in progress
	Segment   int             `json:"segment"`    // segments done in it
	SumNLL    float64         `json:"sum_nll"`    // its words' NLL so far
	Words     int             `json:"words"`      // and their count
	BestValid float64         `json:"best_valid"` // 0 before any
	LR        float64         `json:"lr"`
	Seconds   float64         `json:"seconds"`
	Done      []Epoch         `json:"done"`
}

// identity is what a resumed run must share with the one it continues.
func identity(m *Model, stream []int32, o TrainOptions) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{"model": m.Cfg, "vocab": m.Vocab.Len(), "words": len(stream), "batch": o.Batch,
		"bptt": o.BPTT, "lr": o.LR, "clip": o.Clip, "decay": o.Decay})
	return raw
}

// Train trains m on the stream (Stream's output) and writes the model to
// opt.Out.
func Train(m *Model, stream []int32, opt TrainOptions) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	per := len(stream) / opt.Batch // words per stream
	if per < 2 {
		return nil, fmt.Errorf("lstmlm: %d words cannot fill %d streams of two words", len(stream), opt.Batch)
	}
	segments := (per - 1 + opt.BPTT - 1) / opt.BPTT
	params := m.Params()
	adam := optim.NewAdam(optim.AdamConfig{LR: opt.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	pr := progress{Identity: identity(m, stream, opt), Epoch: 1, LR: opt.LR}
	carry := &ag.LSTMCarry{}
	ckpt := opt.Out + ".ckpt"
	if opt.Resume {
		ok, err := loadCheckpoint(ckpt, m, adam, &pr, carry)
		if err != nil {
			return nil, err
		}
		if ok && opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "resuming epoch %d at segment %d of %d\n", pr.Epoch, pr.Segment, segments)
		}
	}
	adam.SetLR(pr.LR)
	h := m.Cfg.Hidden
	ids := make([]int32, opt.Batch*opt.BPTT)
	targets := make([]int, opt.Batch*opt.BPTT)
	lastSave, done := time.Now(), 0
	tp := ag.NewTape()
	tp.Train = true
	for ; pr.Epoch <= opt.Epochs; pr.Epoch++ {
		start := time.Now()
		for ; pr.Segment < segments; pr.Segment++ {
			at := pr.Segment * opt.BPTT
			steps := min(opt.BPTT, per-1-at)
			for b := range opt.Batch {
				s := stream[b*per : (b+1)*per]
				for t := range steps {
					ids[b*steps+t], targets[b*steps+t] = s[at+t], int(s[at+t+1])
				}
			}
			if carry.H == nil {
				carry.H, carry.C = make([]float32, opt.Batch*h), make([]float32, opt.Batch*h)
			}
			tp.Reset()
			logits := m.forward(tp, ids[:opt.Batch*steps], opt.Batch, steps, carry, nil)
			loss := tp.CrossEntropy(logits, targets[:opt.Batch*steps], nil)
			if l := float64(loss.Item()); math.IsNaN(l) || math.IsInf(l, 0) {
				return nil, fmt.Errorf("lstmlm: epoch %d, segment %d: loss %g", pr.Epoch, pr.Segment, l)
			}
			tp.Backward(loss)
			if opt.Clip > 0 {
				optim.ClipGradNorm(params, opt.Clip)
			}
			adam.Step(params)
			optim.ZeroGrad(params)
			pr.SumNLL += float64(loss.Item()) * float64(opt.Batch*steps)
			pr.Words += opt.Batch * steps
			if opt.Progress != nil && (pr.Segment+1)%100 == 0 {
				fmt.Fprintf(opt.Progress, "epoch %d: segment %d/%d, train perplexity %.1f\n", pr.Epoch, pr.Segment+1, segments, math.Exp(pr.SumNLL/float64(pr.Words)))
			}
			done++
			if opt.stopAfter > 0 && done == opt.stopAfter {
				saved := pr
				saved.Segment++
				if err := saveCheckpoint(ckpt, m, adam, saved, carry); err != nil {
					return nil, err
				}
				return nil, errStopped
			}
			if opt.CheckpointEvery > 0 && time.Since(lastSave) >= opt.CheckpointEvery {
				saved := pr
				saved.Segment++ // this one is done
				saved.Seconds += time.Since(start).Seconds()
				if err := saveCheckpoint(ckpt, m, adam, saved, carry); err != nil {
					return nil, err
				}
				lastSave = time.Now()
			}
		}
		ep := Epoch{Epoch: pr.Epoch, TrainPPL: math.Exp(pr.SumNLL / float64(max(pr.Words, 1))), LR: adam.LR(), Words: pr.Words,
			Seconds: pr.Seconds + time.Since(start).Seconds()}
		if len(opt.Valid) > 0 {
			v, err := m.Perplexity(opt.Valid)
			if err != nil {
				return nil, err
			}
			ep.ValidPPL = v
			if pr.BestValid > 0 && v >= pr.BestValid {
				adam.SetLR(adam.LR() * opt.Decay)
			}
			if pr.BestValid == 0 || v < pr.BestValid {
				pr.BestValid = v
			}
		}
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "epoch %d: train perplexity %.2f, validation %.2f (%.0fs)\n", ep.Epoch, ep.TrainPPL, ep.ValidPPL, ep.Seconds)
		}
		pr.Done = append(pr.Done, ep)
		pr.Segment, pr.SumNLL, pr.Words, pr.Seconds, pr.LR = 0, 0, 0, 0, adam.LR()
		carry.H, carry.C = nil, nil
		next := pr
		next.Epoch++
		if err := saveCheckpoint(ckpt, m, adam, next, carry); err != nil {
			return nil, err
		}
		lastSave = time.Now()
	}
	info := map[string]any{"epochs": pr.Done, "batch": opt.Batch, "bptt": opt.BPTT, "lr": opt.LR, "clip": opt.Clip, "decay": opt.Decay}
	for k, v := range opt.Info {
		info[k] = v
	}
	if err := m.Save(opt.Out, info); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(ckpt); err != nil {
		return nil, err
	}
	return &Result{Epochs: pr.Done}, nil
}

const (
	optimPrefix = "optimizer/"
	carryH      = "carry/h"
	carryC      = "carry/c"
)

func saveCheckpoint(dir string, m *Model, adam *optim.Adam, pr progress, carry *ag.LSTMCarry) error {
	cfg, err := json.Marshal(pr)
	if err != nil {
		return err
	}
	ts := map[string]*tensor.Tensor{}
	for _, p := range m.Params() {
		ts[p.Name] = p.Value
	}
	for k, v := range adam.State() {
		ts[optimPrefix+k] = v
	}
	if carry.H != nil {
		ts[carryH], ts[carryC] = tensor.From(carry.H, len(carry.H)), tensor.From(carry.C, len(carry.C))
	}
	return checkpoint.Save(dir, &checkpoint.Bundle{Config: cfg, Vocab: m.Vocab.Words(), Tensors: ts})
}

// loadCheckpoint restores a checkpoint of the same run; ok is false when
// there is none.
func loadCheckpoint(dir string, m *Model, adam *optim.Adam, pr *progress, carry *ag.LSTMCarry) (bool, error) {
	var saved progress
	b, ok, err := checkpoint.LoadRun(dir, &saved)
	if !ok || err != nil {
		if err != nil {
			err = fmt.Errorf("lstmlm: cannot resume: %w", err)
		}
		return false, err
	}
	if string(saved.Identity) != string(pr.Identity) || !slices.Equal(b.Vocab, m.Vocab.Words()) {
		return false, fmt.Errorf("lstmlm: cannot resume: %s was trained with other settings or data (%s; this run %s); remove it to start afresh",
			dir, saved.Identity, pr.Identity)
	}
	weights, state := b.Split(optimPrefix)
	if err := optim.Restore(m.Params(), weights, adam, state); err != nil {
		return false, fmt.Errorf("lstmlm: cannot resume: %s: %w", dir, err)
	}
	if h, c := b.Tensors[carryH], b.Tensors[carryC]; h != nil && c != nil {
		carry.H, carry.C = slices.Clone(h.Data), slices.Clone(c.Data)
	}
	*pr = saved
	return true, nil
}

// BenchStep returns one training step of m on a random batch of segments
// (batch streams of bptt words, Adam, clip 5) for speed tables, and the
// step's floating-point operations: the products of the forward pass
// (input and recurrent LSTM maps, the softmax layer) and twice them
// backward.
func BenchStep(m *Model, batch, bptt int, seed int64) (step func(), flops float64) {
	r := rand.New(rand.NewSource(seed))
	v := m.Vocab.Len()
	ids, targets := make([]int32, batch*bptt), make([]int, batch*bptt)
	for i := range ids {
		ids[i], targets[i] = int32(2+r.Intn(v-2)), 2+r.Intn(v-2)
	}
	params := m.Params()
	adam := optim.NewAdam(optim.AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	carry := &ag.LSTMCarry{}
	tp := ag.NewTape()
	tp.Train = true
	step = func() {
		tp.Reset()
		tp.Backward(tp.CrossEntropy(m.forward(tp, ids, batch, bptt, carry, nil), targets, nil))
		optim.ClipGradNorm(params, 5)
		adam.Step(params)
		optim.ZeroGrad(params)
	}
	d, h, n := float64(m.Cfg.EmbedDim), float64(m.Cfg.Hidden), float64(batch*bptt)
	fwd := 2*n*d*4*h + 2*n*h*4*h + 2*n*h*float64(v)
	return step, 3 * fwd
}
