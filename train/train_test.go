package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

func setup(t *testing.T, arch string, seed int64) (*model.Model, []Example, []Example) {
	t.Helper()
	ds := synth.SentimentDataset(400, 100, 10, 3)
	tok := text.NewWhitespace()
	vocab := BuildVocab(tok, ds.Train, 1, 0)
	cfg := nn.DefaultConfig(arch)
	cfg.EmbedDim, cfg.Filters, cfg.Hidden = 16, 8, 8
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 30, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return m, Encode(m, ds.Train), Encode(m, ds.Dev)
}

func weights(m *model.Model) []float32 {
	var w []float32
	for _, p := range m.Net.Params() {
		w = append(w, p.Value.Data...)
	}
	return w
}

func TestSameSeedSameNumbers(t *testing.T) {
	for _, arch := range []string{"cnn", "bilstm"} {
		var runs [][]float32
		var devs []float64
		for i := 0; i < 2; i++ {
			m, tr, dv := setup(t, arch, 1)
			res, err := Run(m, Standard{}, tr, dv, Options{Epochs: 2, BatchSize: 16, Seed: 5, Out: filepath.Join(t.TempDir(), "m")})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, weights(m))
			devs = append(devs, res.BestDevAcc)
		}
		if d := tensor.MaxAbsDiff(runs[0], runs[1]); d != 0 || devs[0] != devs[1] {
			t.Fatalf("%s: same seed gave weights differing by %g, dev %v", arch, d, devs)
		}
		m, tr, dv := setup(t, arch, 1)
		if _, err := Run(m, Standard{}, tr, dv, Options{Epochs: 2, BatchSize: 16, Seed: 6, Out: filepath.Join(t.TempDir(), "m")}); err != nil {
			t.Fatal(err)
		}
		if tensor.MaxAbsDiff(runs[0], weights(m)) == 0 {
			t.Fatalf("%s: a different seed gave identical weights", arch)
		}
	}
}

// failingObjective fails at a given epoch, as a killed run would stop.
type failingObjective struct {
	Standard
	failAtStep, steps int
}

func (f *failingObjective) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (Output, error) {
	f.steps++
	if f.steps == f.failAtStep {
		return Output{}, errors.New("killed")
	}
	return f.Standard.Loss(t, m, b)
}

// TestResumeMatchesUninterrupted: a run stopped in epoch 3 and resumed ends
// with exactly the weights of a run that never stopped.
func TestResumeMatchesUninterrupted(t *testing.T) {
	dir := t.TempDir()
	full, tr, dv := setup(t, "cnn", 1)
	opt := Options{Epochs: 4, BatchSize: 16, Seed: 9, Out: filepath.Join(dir, "full")}
	if _, err := Run(full, Standard{}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	steps := (len(tr) + 15) / 16
	broken, tr, dv := setup(t, "cnn", 1)
	opt.Out = filepath.Join(dir, "resumed")
	_, err := Run(broken, &failingObjective{failAtStep: 2*steps + 3}, tr, dv, opt)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("expected the run to stop, got %v", err)
	}
	if _, err := os.Stat(opt.Out + ".ckpt"); err != nil {
		t.Fatalf("no checkpoint after an interrupted run: %v", err)
	}
	resumed, tr, dv := setup(t, "cnn", 77) // different init: everything must come from the checkpoint
	opt.Resume = true
	res, err := Run(resumed, Standard{}, tr, dv, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedFrom != 2 {
		t.Fatalf("resumed from epoch %d, want 2", res.ResumedFrom)
	}
	if d := tensor.MaxAbsDiff(weights(full), weights(resumed)); d != 0 {
		t.Fatalf("resumed run differs from the uninterrupted one by %g", d)
	}
	if _, err := os.Stat(opt.Out + ".ckpt"); !os.IsNotExist(err) {
		t.Fatal("checkpoint not removed after the run finished")
	}
}

// TestExtendKeptCheckpoint: a 2-epoch run that keeps its checkpoint,
// extended to 4 epochs, ends with the weights and per-epoch record of a
// 4-epoch run (Adam's moments come back with the checkpoint).
func TestExtendKeptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	full, tr, dv := setup(t, "bilstm", 1)
	opt := Options{Epochs: 4, BatchSize: 16, Seed: 9, Out: filepath.Join(dir, "full")}
	want, err := Run(full, Standard{}, tr, dv, opt)
	if err != nil {
		t.Fatal(err)
	}
	short, tr, dv := setup(t, "bilstm", 1)
	opt = Options{Epochs: 2, BatchSize: 16, Seed: 9, Out: filepath.Join(dir, "short"), KeepCheckpoint: true}
	if _, err := Run(short, Standard{}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(opt.Out + ".ckpt"); err != nil {
		t.Fatalf("KeepCheckpoint: no checkpoint after the run: %v", err)
	}
	if tensor.MaxAbsDiff(weights(full), weights(short)) == 0 {
		t.Fatal("2 and 4 epochs gave the same weights")
	}
	extended, tr, dv := setup(t, "bilstm", 77)
	opt.Epochs, opt.Resume, opt.KeepCheckpoint = 4, true, false
	got, err := Run(extended, Standard{}, tr, dv, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got.ResumedFrom != 2 || len(got.Epochs) != 4 || got.BestEpoch != want.BestEpoch {
		t.Fatalf("extended run: resumed from %d, %d epochs, best %d; want 2, 4, %d", got.ResumedFrom, len(got.Epochs), got.BestEpoch, want.BestEpoch)
	}
	if d := tensor.MaxAbsDiff(weights(full), weights(extended)); d != 0 {
		t.Fatalf("extended run differs from the 4-epoch one by %g", d)
	}
	if _, err := os.Stat(opt.Out + ".ckpt"); !os.IsNotExist(err) {
		t.Fatal("checkpoint kept although the extending run did not ask for it")
	}
}

// settingsObjective is Standard with a recorded hyper-parameter.
type settingsObjective struct {
	failingObjective
	w float64
}

func (*settingsObjective) Name() string           { return "weighted" }
func (s *settingsObjective) Info() map[string]any { return map[string]any{"w": s.w} }

// A checkpoint resumes only under the objective and settings it was made
// with: mixing two configurations would silently train neither.
func TestResumeRefusesOtherObjective(t *testing.T) {
	m, tr, dv := setup(t, "cnn", 1)
	opt := Options{Epochs: 3, BatchSize: 16, Seed: 9, Out: filepath.Join(t.TempDir(), "m")}
	steps := (len(tr) + 15) / 16
	if _, err := Run(m, &settingsObjective{failingObjective{failAtStep: steps + 2}, 0.1}, tr, dv, opt); err == nil {
		t.Fatal("the interrupted run did not stop")
	}
	opt.Resume = true
	for _, c := range []struct {
		obj  Objective
		want string
	}{
		{&settingsObjective{w: 0.2}, `settings {"w":0.1}, this run has {"w":0.2}`},
		{Standard{}, "objective weighted, this run uses standard"},
	} {
		m, tr, dv := setup(t, "cnn", 1)
		if _, err := Run(m, c.obj, tr, dv, opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resume with %s: got %v, want an error containing %q", c.obj.Name(), err, c.want)
		}
	}
	m, tr, dv = setup(t, "cnn", 1)
	res, err := Run(m, &settingsObjective{w: 0.1}, tr, dv, opt)
	if err != nil || res.ResumedFrom != 1 {
		t.Fatalf("resume with the same settings: %v (resumed from %v)", err, res)
	}
}

type nanObjective struct{ Standard }

func (nanObjective) Name() string { return "nan-test" }

func (nanObjective) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (Output, error) {
	out, _ := Standard{}.Loss(t, m, b)
	bad := t.Mul(out.Loss, t.Const(tensor.Scalar(float32(0))))
	bad = t.Div(bad, t.Const(tensor.Scalar(0)))
	return Output{Loss: bad, Terms: map[string]float32{"ce": out.Loss.Item(), "boom": bad.Item()}}, nil
}

func TestNaNStopsTraining(t *testing.T) {
	m, tr, dv := setup(t, "cnn", 1)
	out := filepath.Join(t.TempDir(), "m")
	_, err := Run(m, nanObjective{}, tr, dv, Options{Epochs: 1, Out: out})
	if err == nil || !strings.Contains(err.Error(), "step 1") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want an error naming the step and term, got %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a model was written despite the NaN")
	}
}

func TestEarlyStoppingAndBestModel(t *testing.T) {
	m, tr, dv := setup(t, "cnn", 1)
	out := filepath.Join(t.TempDir(), "m")
	// A huge learning rate makes dev accuracy wander; patience 1 must stop.
	res, err := Run(m, Standard{}, tr, dv, Options{Epochs: 30, LR: 0.5, Optimizer: "sgd", Seed: 1, Patience: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if !res.StoppedEarly || len(res.Epochs) == 30 {
		t.Fatalf("did not stop early: %d epochs", len(res.Epochs))
	}
	best, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := Accuracy(best.Net, dv); got != res.BestDevAcc {
		t.Fatalf("saved model's dev accuracy %v, best recorded %v", got, res.BestDevAcc)
	}
}

func TestBatchesCoverEveryExampleOnce(t *testing.T) {
	ex := make([]Example, 1000)
	for i := range ex {
		ex[i] = Example{IDs: make([]int32, 1+i%37), Label: i}
	}
	seen := make([]int, len(ex))
	for _, b := range Batches(ex, 64, rand.New(rand.NewSource(1)), 3) {
		for _, l := range b.Labels {
			seen[l]++
		}
		if b.L < 3 {
			t.Fatal("batch shorter than minLen")
		}
	}
	for i, s := range seen {
		if s != 1 {
			t.Fatalf("example %d seen %d times", i, s)
		}
	}
}

func TestSharedOptimizerCarriesState(t *testing.T) {
	opts := func(dir string) Options {
		return Options{Epochs: 1, BatchSize: 16, Seed: 5, LR: 0.01, Out: filepath.Join(dir, "m")}
	}
	// A fresh shared optimizer is exactly the one Run would build.
	m1, tr, dv := setup(t, "cnn", 1)
	if _, err := Run(m1, Standard{}, tr, dv, opts(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	m2, _, _ := setup(t, "cnn", 1)
	o := opts(t.TempDir())
	o.Shared = NewOptimizer(o)
	if _, err := Run(m2, Standard{}, tr, dv, o); err != nil {
		t.Fatal(err)
	}
	if d := tensor.MaxAbsDiff(weights(m1), weights(m2)); d != 0 {
		t.Fatalf("fresh shared optimizer: weights differ by %g", d)
	}
	// A second run that keeps the optimizer (Adam's moments and step count)
	// differs from one that restarts it.
	if _, err := Run(m2, Standard{}, tr, dv, o); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(m1, Standard{}, tr, dv, opts(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	if tensor.MaxAbsDiff(weights(m1), weights(m2)) == 0 {
		t.Fatal("carrying the optimizer over changed nothing")
	}
}

// scheduledObjective records the steps Run announces.
type scheduledObjective struct {
	failingObjective
	seen []int
}

func (s *scheduledObjective) AtStep(step int) { s.seen = append(s.seen, step) }

// A scheduled objective sees the run's global step, and a resumed run
// continues the count where the interrupted one stopped (IBP's ramps).
func TestScheduledStepsSurviveResume(t *testing.T) {
	m, tr, dv := setup(t, "cnn", 1)
	opt := Options{Epochs: 3, BatchSize: 16, Seed: 9, Out: filepath.Join(t.TempDir(), "m")}
	steps := (len(tr) + 15) / 16
	broken := &scheduledObjective{failingObjective: failingObjective{failAtStep: 2*steps + 2}}
	if _, err := Run(m, broken, tr, dv, opt); err == nil {
		t.Fatal("the interrupted run did not stop")
	}
	for i, s := range broken.seen {
		if s != i {
			t.Fatalf("step %d announced as %d", i, s)
		}
	}
	opt.Resume = true
	resumed := &scheduledObjective{}
	m, tr, dv = setup(t, "cnn", 1)
	if _, err := Run(m, resumed, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	if len(resumed.seen) != steps || resumed.seen[0] != 2*steps || resumed.seen[steps-1] != 3*steps-1 {
		t.Fatalf("resumed run announced steps %v, want %d..%d", resumed.seen, 2*steps, 3*steps-1)
	}
}

// randomObjective scales the loss by a factor from a random stream of its
// own, so the weights depend on where that stream stands.
type randomObjective struct {
	failingObjective
	r   *rand.Rand
	src *seeded.Source
}

func (o *randomObjective) stream() *rand.Rand {
	if o.r == nil {
		o.r, o.src = seeded.New(3)
	}
	return o.r
}

func (o *randomObjective) RandomDraws() uint64 { o.stream(); return o.src.Draws() }
func (o *randomObjective) SkipRandom(n uint64) { o.stream(); o.src.Skip(n) }

func (o *randomObjective) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (Output, error) {
	out, err := o.failingObjective.Loss(t, m, b)
	if err != nil {
		return out, err
	}
	out.Loss = t.Scale(out.Loss, float32(0.5+o.stream().Float64()))
	return out, nil
}

// A run killed inside an epoch resumes from its last checkpoint, inside
// the epoch or at its start, and ends with exactly the weights and epoch
// statistics of a run that never stopped: the batch order, the tape's
// dropout draws, the objective's own random stream and the running sums
// all continue where they were.
func TestResumeInsideEpochMatchesUninterrupted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		every     time.Duration
		failAt    int // step of the run at which it is killed, in units of an epoch's steps plus a remainder
		extra     int
		wantEpoch int // ResumedFrom
	}{
		{"checkpoint every step, killed in epoch 2", time.Nanosecond, 1, 4, 1},
		{"epoch checkpoints only, killed in epoch 3", 0, 2, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			full, tr, dv := setup(t, "cnn", 1)
			opt := Options{Epochs: 3, BatchSize: 16, Seed: 9, Out: filepath.Join(dir, "full")}
			want, err := Run(full, &randomObjective{}, tr, dv, opt)
			if err != nil {
				t.Fatal(err)
			}
			steps := (len(tr) + 15) / 16
			broken, tr, dv := setup(t, "cnn", 1)
			opt.Out, opt.CheckpointEvery = filepath.Join(dir, "resumed"), tc.every
			if _, err := Run(broken, &randomObjective{failingObjective: failingObjective{failAtStep: tc.failAt*steps + tc.extra}}, tr, dv, opt); err == nil {
				t.Fatal("the interrupted run did not stop")
			}
			resumed, tr, dv := setup(t, "cnn", 77)
			opt.Resume = true
			got, err := Run(resumed, &randomObjective{}, tr, dv, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got.ResumedFrom != tc.wantEpoch {
				t.Errorf("resumed from epoch %d, want %d", got.ResumedFrom, tc.wantEpoch)
			}
			if d := tensor.MaxAbsDiff(weights(full), weights(resumed)); d != 0 {
				t.Fatalf("resumed run differs from the uninterrupted one by %g", d)
			}
			for i := range want.Epochs {
				w, g := want.Epochs[i], got.Epochs[i]
				if w.TrainLoss != g.TrainLoss || w.TrainAcc != g.TrainAcc || w.DevAcc != g.DevAcc || w.Terms["ce"] != g.Terms["ce"] {
					t.Errorf("epoch %d: loss %v acc %v dev %v, uninterrupted %v %v %v", i+1, g.TrainLoss, g.TrainAcc, g.DevAcc, w.TrainLoss, w.TrainAcc, w.DevAcc)
				}
			}
		})
	}
}

// TestLinearScheduleWarmsUpAndDecays: with the linear schedule the epochs
// log the rate of their last step: rising through the warm-up share, then
// falling to 0 at the last step; AdamW trains as well as Adam here.
func TestLinearScheduleWarmsUpAndDecays(t *testing.T) {
	m, tr, dv := setup(t, "cnn", 1)
	opt := Options{Epochs: 4, BatchSize: 16, Seed: 5, LR: 0.01, Optimizer: "adamw", WeightDecay: 0.01,
		Schedule: "linear", Warmup: 0.5, Out: filepath.Join(t.TempDir(), "m")}
	res, err := Run(m, Standard{}, tr, dv, opt)
	if err != nil {
		t.Fatal(err)
	}
	steps := res.Epochs[0].Steps
	total := 4 * steps
	warm := total / 2
	for i, e := range res.Epochs {
		last := (i+1)*steps - 1
		want := 0.01 * float64(last+1) / float64(warm)
		if last >= warm {
			want = 0.01 * float64(total-last) / float64(total-warm)
		}
		if d := e.LR - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("epoch %d ends at rate %g, want %g", e.Epoch, e.LR, want)
		}
	}
	if res.BestDevAcc < 0.8 {
		t.Errorf("best dev accuracy %g on the generated task", res.BestDevAcc)
	}
	if m.Training["schedule"] != "linear" || m.Training["optimizer"] != "adamw" {
		t.Errorf("training record %v lacks the schedule or optimizer", m.Training)
	}
	for _, bad := range []Options{{Warmup: 0.1}, {Schedule: "cosine"}, {Schedule: "linear", Warmup: 1}, {Schedule: "linear", DecayEpochs: []int{2}}} {
		bad.Out = filepath.Join(t.TempDir(), "m")
		if _, err := Run(m, Standard{}, tr, dv, bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

// TestResumeOfFinishedRunRefused: a resume into a run that completed (its
// checkpoint removed) is "nothing to resume", so that the train command
// leaves the model as it was instead of training again over it.
func TestResumeOfFinishedRunRefused(t *testing.T) {
	m, tr, dv := setup(t, "cnn", 1)
	out := filepath.Join(t.TempDir(), "m")
	if _, err := Run(m, Standard{}, tr, dv, Options{Epochs: 1, BatchSize: 16, Seed: 5, Out: out}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(out, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if err := NothingToResume(out); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Fatalf("resume of a finished run: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(out, "model.safetensors"))
	if string(before) != string(after) {
		t.Error("the finished model was touched")
	}
	// An interrupted run (checkpoint kept) and a fresh folder resume.
	if err := NothingToResume(filepath.Join(t.TempDir(), "fresh")); err != nil {
		t.Errorf("fresh folder: %v", err)
	}
	opt := Options{Epochs: 1, BatchSize: 16, Seed: 5, Out: filepath.Join(t.TempDir(), "kept"), KeepCheckpoint: true}
	if _, err := Run(m, Standard{}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	if err := NothingToResume(opt.Out); err != nil {
		t.Errorf("run with its checkpoint: %v", err)
	}
	// A checkpoint left only as a complete copy by a kill inside its save.
	if err := os.Rename(opt.Out+".ckpt", opt.Out+".ckpt.tmp-00000000000000f1"); err != nil {
		t.Fatal(err)
	}
	if err := NothingToResume(opt.Out); err != nil {
		t.Errorf("run with its checkpoint left as a copy: %v", err)
	}
}

// TestResumeTransformer: a transformer run resumes from its checkpoint
// (its word-piece vocabulary is what the checkpoint is checked against).
func TestResumeTransformer(t *testing.T) {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	lex := synth.DefaultLexicon()
	for _, g := range append(lex.Positive, lex.Negative...) {
		vocab = append(vocab, g...)
	}
	vocab = append(vocab, lex.Neutral...)
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	cfg.EmbedDim = 16
	opts := wp.Options()
	ds := synth.SentimentDataset(200, 60, 10, 3)
	build := func() *model.Model {
		m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: ds.Classes, Pieces: &opts}, wp, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := build()
	tr, dv := Encode(m, ds.Train), Encode(m, ds.Dev)
	out := filepath.Join(t.TempDir(), "m")
	opt := Options{Epochs: 1, BatchSize: 16, Seed: 5, LR: 1e-3, Out: out, KeepCheckpoint: true}
	if _, err := Run(m, Standard{}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	opt.Epochs, opt.Resume = 2, true
	res, err := Run(build(), Standard{}, tr, dv, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedFrom != 1 || len(res.Epochs) != 2 {
		t.Errorf("resumed from %d with %d epochs", res.ResumedFrom, len(res.Epochs))
	}
}

// TestResumeRefusesOtherSettings: a resume with another batch size,
// learning rate, length limit or (under the linear schedule) epoch count is
// refused naming the flag; more epochs without a schedule extend the run.
func TestResumeRefusesOtherSettings(t *testing.T) {
	base := func(out string) Options {
		return Options{Epochs: 1, BatchSize: 16, Seed: 5, LR: 1e-3, Out: out, KeepCheckpoint: true}
	}
	for _, c := range []struct {
		change func(*Options, *model.Model)
		want   string
	}{
		{func(o *Options, _ *model.Model) { o.BatchSize = 32 }, "--batch"},
		{func(o *Options, _ *model.Model) { o.LR = 2e-3 }, "--lr"},
		{func(_ *Options, m *model.Model) { m.MaxLen = 20 }, "--max-len"},
		{func(o *Options, _ *model.Model) { o.Clip = 1 }, "--clip"},
	} {
		m, tr, dv := setup(t, "cnn", 1)
		out := filepath.Join(t.TempDir(), "m")
		if _, err := Run(m, Standard{}, tr, dv, base(out)); err != nil {
			t.Fatal(err)
		}
		m2, _, _ := setup(t, "cnn", 1)
		opt := base(out)
		opt.Epochs, opt.Resume = 2, true
		c.change(&opt, m2)
		if _, err := Run(m2, Standard{}, tr, dv, opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s changed: %v", c.want, err)
		}
	}
	// More epochs extend a run without a schedule, and say so.
	m, tr, dv := setup(t, "cnn", 1)
	out := filepath.Join(t.TempDir(), "m")
	if _, err := Run(m, Standard{}, tr, dv, base(out)); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	opt := base(out)
	opt.Epochs, opt.Resume, opt.Progress = 2, true, &log
	if res, err := Run(m, Standard{}, tr, dv, opt); err != nil || res.ResumedFrom != 1 || !strings.Contains(log.String(), "extending the run from 1 to 2 epochs") {
		t.Errorf("extending: %v, %q", err, log.String())
	}
	// Under the linear schedule the epoch count sets every step's rate.
	out = filepath.Join(t.TempDir(), "s")
	opt = base(out)
	opt.Schedule = "linear"
	if _, err := Run(m, Standard{}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	opt.Epochs, opt.Resume = 2, true
	if _, err := Run(m, Standard{}, tr, dv, opt); err == nil || !strings.Contains(err.Error(), "--epochs") {
		t.Errorf("more epochs under the linear schedule: %v", err)
	}
}

// copyDir copies the flat directory src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.Mkdir(dst, 0o777); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeAfterKillInsideSave: a kill between the two renames of a save
// leaves the checkpoint and the model only as complete copies beside
// missing directories, and the metrics log ahead of the checkpoint. The
// resume must continue from the copy (not restart from epoch 1), end with
// the uninterrupted run's weights, log each epoch once and leave no
// leftovers.
func TestResumeAfterKillInsideSave(t *testing.T) {
	dir := t.TempDir()
	full, tr, dv := setup(t, "cnn", 1)
	opt := Options{Epochs: 4, BatchSize: 16, Seed: 9, Out: filepath.Join(dir, "full")}
	if _, err := Run(full, Standard{}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	steps := (len(tr) + 15) / 16
	broken, tr, dv := setup(t, "cnn", 1)
	opt.Out = filepath.Join(dir, "resumed")
	opt.LogPath = opt.Out + ".log.jsonl"
	if _, err := Run(broken, &failingObjective{failAtStep: 2*steps + 3}, tr, dv, opt); err == nil {
		t.Fatal("the run did not stop")
	}
	ckpt := opt.Out + ".ckpt"
	// The checkpoint swap was cut after moving the old copy aside: the new
	// copy is complete at .tmp-, the old one at .old-.
	copyDir(t, ckpt, ckpt+".tmp-00000000000000c1")
	if err := os.Rename(ckpt, ckpt+".old-00000000000000c0"); err != nil {
		t.Fatal(err)
	}
	// The model swap too, with a copy whose writing never finished.
	if err := os.Rename(opt.Out, opt.Out+".old-00000000000000a0"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(opt.Out+".tmp-00000000000000a1", 0o777); err != nil {
		t.Fatal(err)
	}
	// Epoch 3's line was written before the kill; a fourth was cut short.
	lf, err := os.OpenFile(opt.LogPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	lf.WriteString(`{"epoch":3,"steps":1}` + "\n" + `{"epoch":4,"st`)
	lf.Close()

	resumed, tr, dv := setup(t, "cnn", 77)
	opt.Resume = true
	res, err := Run(resumed, Standard{}, tr, dv, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedFrom != 2 {
		t.Fatalf("resumed from epoch %d, want 2 (the complete copy)", res.ResumedFrom)
	}
	if d := tensor.MaxAbsDiff(weights(full), weights(resumed)); d != 0 {
		t.Fatalf("resumed run differs from the uninterrupted one by %g", d)
	}
	log, err := os.ReadFile(opt.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	var epochs []int
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		var es EpochStats
		if err := json.Unmarshal([]byte(line), &es); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		epochs = append(epochs, es.Epoch)
	}
	if fmt.Sprint(epochs) != "[1 2 3 4]" {
		t.Fatalf("logged epochs %v, want each of 1..4 once", epochs)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") || strings.Contains(e.Name(), ".old-") {
			t.Errorf("leftover %s after the run", e.Name())
		}
	}
	if _, err := model.Load(opt.Out); err != nil {
		t.Fatal(err)
	}
}

// StepsPerEpoch counts what Batches makes, and every row's Index points
// at its example.
func TestStepsPerEpochAndIndex(t *testing.T) {
	for _, n := range []int{1, 31, 32, 33, 1599, 1600, 1601, 4000} {
		ex := make([]Example, n)
		for i := range ex {
			ex[i] = Example{IDs: make([]int32, 1+i%7), Label: i}
		}
		bs := Batches(ex, 32, rand.New(rand.NewSource(int64(n))), 1)
		if got := StepsPerEpoch(n, 32); got != len(bs) {
			t.Errorf("n %d: StepsPerEpoch %d, Batches %d", n, got, len(bs))
		}
		for _, b := range bs {
			for r, i := range b.Index {
				if b.Labels[r] != ex[i].Label {
					t.Fatalf("n %d: row %d's index %d is another example", n, r, i)
				}
			}
		}
	}
}

// TestEvaluateSelects: Options.Evaluate replaces dev accuracy, runs every
// EvalEvery steps and at epoch ends, and the model kept is the one at the
// best score, also when that came inside an epoch; a run killed after that
// and resumed keeps the same model and scores.
func TestEvaluateSelects(t *testing.T) {
	dir := t.TempDir()
	run := func(obj Objective, out string, resume bool) (*Result, [][]float32, error) {
		m, tr, _ := setup(t, "cnn", 1)
		var seen [][]float32
		calls := 0
		opt := Options{Epochs: 2, BatchSize: 16, Seed: 3, Out: out, Resume: resume, EvalEvery: 7,
			Evaluate: func(m *model.Model) (float64, error) {
				calls++
				seen = append(seen, weights(m))
				switch calls {
				case 2: // after step 14: better than the epoch end
					return 10, nil
				case 6: // after step 35, inside epoch 2: the best
					return 20, nil
				}
				return float64(calls % 3), nil
			}}
		res, err := Run(m, obj, tr, nil, opt)
		return res, seen, err
	}
	out := filepath.Join(dir, "m")
	res, seen, err := run(Standard{}, out, false)
	if err != nil {
		t.Fatal(err)
	}
	// 25 steps per epoch, counted over the run: evaluations after steps 7,
	// 14, 21, at the end of epoch 1, after 28, 35, 42, 49, at the end.
	if len(seen) != 9 || len(res.Evals) != 7 || res.Evals[1].Step != 14 || res.Evals[6].Step != 49 {
		t.Fatalf("%d evaluations, in-epoch %v", len(seen), res.Evals)
	}
	if res.BestEpoch != 2 || res.BestStep != 35 || res.BestDevAcc != 20 {
		t.Fatalf("best epoch %d step %d score %g; want epoch 2 step 35 score 20", res.BestEpoch, res.BestStep, res.BestDevAcc)
	}
	kept, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := tensor.MaxAbsDiff(weights(kept), seen[5]); d != 0 {
		t.Fatalf("the kept model differs from the best-scored one by %g", d)
	}
	// Killed in epoch 2 after the best save at step 35 (and its checkpoint):
	// the resumed run continues from there.
	out2 := filepath.Join(dir, "k")
	if _, _, err := run(&failingObjective{failAtStep: 38}, out2, false); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the run did not stop: %v", err)
	}
	res2, _, err := run(Standard{}, out2, true)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := model.Load(out2)
	if err != nil {
		t.Fatal(err)
	}
	if res2.BestStep != 35 || tensor.MaxAbsDiff(weights(k2), seen[5]) != 0 {
		t.Fatalf("after the resume: best step %d, model differs by %g", res2.BestStep, tensor.MaxAbsDiff(weights(k2), seen[5]))
	}
	if a, b := res.Epochs[1].TrainLoss, res2.Epochs[len(res2.Epochs)-1].TrainLoss; a != b {
		t.Fatalf("epoch 2's training loss %g uninterrupted, %g resumed", a, b)
	}
}
