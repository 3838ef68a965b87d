package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/optim"
)

// Options control a training run. Zero values mean the defaults noted.
type Options struct {
	Epochs      int     // 10
	BatchSize   int     // 64
	Optimizer   string  // adam | adamw | sgd (adam); adamw decays weights decoupled, biases and LayerNorms exempt
	LR          float64 // 1e-3
	Momentum    float64 // sgd only
	WeightDecay float64
	Clip        float64 // global gradient-norm clip; 0 = off
	// DecayEpochs multiplies the learning rate by DecayGamma at the start
	// of each listed epoch (1-based), as PyTorch's MultiStepLR.
	DecayEpochs []int
	DecayGamma  float64
	// Schedule "linear" sets the learning rate at every step: a linear
	// warm-up over the first Warmup share of all steps, then a linear decay
	// that reaches 0 just after the last step (BERT fine-tuning; Hugging Face's
	// get_linear_schedule_with_warmup). "" keeps LR (and DecayEpochs).
	Schedule string
	Warmup   float64
	// LRScale multiplies the learning rate of the params it names (adam
	// and adamw): FTML on a transformer with the word-embedding table's
	// rate raised, to compress the paper's step count (--embed-lr-scale).
	LRScale map[string]float64
	Seed    int64
	// Patience stops training after this many epochs without a better dev
	// accuracy; 0 never stops early.
	Patience int
	// Out is the model directory; the best-on-dev model is written there
	// (the last one when there is no dev set). Checkpoints go to Out+".ckpt"
	// and are removed when the run completes, unless KeepCheckpoint.
	Out      string
	Resume   bool
	Progress io.Writer // stderr progress bar; nil for none
	LogPath  string    // JSONL metrics log; "" for none
	// Info is stored in the model's training record.
	Info map[string]any
	// Shared, when set, is used instead of a fresh optimizer, so that its
	// state carries over between runs (FLAT's rounds keep one Adam).
	// Optimizer, LR's initial value, Momentum and WeightDecay are then the
	// shared optimizer's; LR is still set at every epoch.
	Shared optim.Optimizer
	// CheckpointEvery, when positive, also checkpoints inside an epoch
	// whenever this much time has passed since the last checkpoint, so an
	// interrupted run of long epochs loses at most about this much work.
	// The resumed run draws and computes exactly what an uninterrupted one
	// would.
	CheckpointEvery time.Duration
	// KeepCheckpoint keeps the last epoch's checkpoint, so that a later
	// Run asking for more epochs (Resume, the same objective settings)
	// continues it and ends where one longer run would have: each epoch's
	// draws depend only on the seed and the epoch number.
	KeepCheckpoint bool
	// Evaluate, when set, is the selection score (higher is better) in place
	// of dev accuracy: a sentence encoder's STS-B dev Spearman, say. It
	// runs at every epoch end and, with EvalEvery > 0, every EvalEvery
	// steps (counted over the run); a better score saves the model then,
	// with a checkpoint, so that a resumed run knows it.
	Evaluate  func(*model.Model) (float64, error)
	EvalEvery int
}

func (o *Options) defaults() error {
	if o.Epochs == 0 {
		o.Epochs = 10
	}
	if o.BatchSize == 0 {
		o.BatchSize = 64
	}
	if o.Optimizer == "" {
		o.Optimizer = "adam"
	}
	if o.LR == 0 {
		o.LR = 1e-3
	}
	if o.DecayGamma == 0 {
		o.DecayGamma = 0.1
	}
	switch {
	case o.Epochs < 0 || o.BatchSize < 1:
		return fmt.Errorf("epochs %d and batch size %d must be positive", o.Epochs, o.BatchSize)
	case o.LR < 0 || o.Clip < 0:
		return fmt.Errorf("learning rate %g and clip %g must not be negative", o.LR, o.Clip)
	case o.Optimizer != "adam" && o.Optimizer != "adamw" && o.Optimizer != "sgd":
		return fmt.Errorf("optimizer %q: want adam, adamw or sgd", o.Optimizer)
	case o.Schedule != "" && o.Schedule != "linear":
		return fmt.Errorf("schedule %q: want linear or none", o.Schedule)
	case !(o.Warmup >= 0 && o.Warmup < 1):
		return fmt.Errorf("warm-up share %g must be in [0, 1)", o.Warmup)
	case o.Warmup > 0 && o.Schedule == "":
		return fmt.Errorf("a warm-up (%g) needs the linear schedule", o.Warmup)
	case slices.ContainsFunc(slices.Collect(maps.Values(o.LRScale)), func(f float64) bool { return !(f > 0 && f <= 1e6) }):
		return fmt.Errorf("learning-rate scales %s: each must be in (0, 1e6]", lrScaleText(o.LRScale))
	case len(o.LRScale) > 0 && o.Optimizer == "sgd":
		return errors.New("per-parameter learning-rate scales (--embed-lr-scale) need adam or adamw")
	case o.Schedule != "" && len(o.DecayEpochs) > 0:
		return fmt.Errorf("the %s schedule and decay epochs %v both set the learning rate: pick one", o.Schedule, o.DecayEpochs)
	}
	return nil
}

// stepSchedule returns the per-step learning rates of the linear schedule
// for steps batches per epoch, or nil without one.
func (o *Options) stepSchedule(steps int) optim.Schedule {
	if o.Schedule == "" {
		return nil
	}
	total := o.Epochs * steps
	return optim.LinearWarmupDecay(o.LR, int(o.Warmup*float64(total)), total)
}

// EpochStats is one line of the metrics log.
type EpochStats struct {
	Epoch     int                `json:"epoch"`
	Steps     int                `json:"steps"`
	TrainLoss float64            `json:"train_loss"`
	TrainAcc  float64            `json:"train_acc"`
	Terms     map[string]float64 `json:"terms,omitempty"`
	DevAcc    float64            `json:"dev_acc"`
	LR        float64            `json:"lr"`
	Seconds   float64            `json:"seconds"`
	Best      bool               `json:"best"`
}

// Result summarises a run.
type Result struct {
	Epochs     []EpochStats `json:"epochs"`
	BestEpoch  int          `json:"best_epoch"`
	BestDevAcc float64      `json:"best_dev_acc"`
	// BestStep is the step (counted over the run) after which the kept
	// model was evaluated inside an epoch; 0 when it was an epoch's end.
	BestStep int `json:"best_step,omitempty"`
	// Evals are Options.Evaluate's scores inside epochs, by step.
	Evals        []StepScore `json:"evals,omitempty"`
	ResumedFrom  int         `json:"resumed_from,omitempty"`
	StoppedEarly bool        `json:"stopped_early,omitempty"`
}

// StepScore is one evaluation inside an epoch.
type StepScore struct {
	Step  int     `json:"step"`
	Score float64 `json:"score"`
}

// state is what a checkpoint stores besides tensors.
type state struct {
	Epoch    int        `json:"epoch"` // epochs completed
	Seed     int64      `json:"seed"`
	Result   Result     `json:"result"`
	BadEpoch int        `json:"bad_epochs"`
	Meta     model.Meta `json:"meta"`
	// Extra is the caller's record in SaveCheckpoint's checkpoints.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Objective and Settings identify the training objective, so that a
	// resume with other hyper-parameters is refused instead of mixing two
	// runs. Older checkpoints have neither and are not checked.
	Objective string          `json:"objective,omitempty"`
	Settings  json.RawMessage `json:"settings,omitempty"`
	// Run holds the options that shape the result, so that a resume with
	// other ones is refused (older checkpoints have none).
	Run *runSettings `json:"run,omitempty"`
	// ObjectiveDraws is how far the objective's own random stream had got
	// (objectives implementing Random).
	ObjectiveDraws uint64 `json:"objective_draws,omitempty"`
	// Partial is an unfinished epoch's progress, in checkpoints written
	// inside an epoch (Options.CheckpointEvery).
	Partial *partialEpoch `json:"partial,omitempty"`
}

// partialEpoch is where a checkpoint inside epoch Epoch stands: Step
// batches done, the tape's random draws so far, and the running sums the
// epoch's statistics are made of.
type partialEpoch struct {
	Epoch     int                `json:"epoch"`
	Step      int                `json:"step"`
	TapeDraws uint64             `json:"tape_draws"`
	LossSum   float64            `json:"loss_sum"`
	Correct   int                `json:"correct"`
	Seen      int                `json:"seen"`
	Terms     map[string]float64 `json:"terms"`
	Seconds   float64            `json:"seconds"`
}

// objectiveSettings is the JSON of an objective's Info(), its recorded
// hyper-parameters; nil when it has none (or an empty Info).
func objectiveSettings(obj Objective) json.RawMessage {
	in, ok := obj.(Recorded)
	if !ok {
		return nil
	}
	info := in.Info()
	if len(info) == 0 {
		return nil
	}
	b, err := json.Marshal(info)
	if err != nil {
		return nil
	}
	return b
}

// NothingToResume reports, for a resume into out, that out holds a
// finished model and no checkpoint is left (a run that completed removes
// it): training again would overwrite that model. Table engines that
// retrain a phase on purpose do not call it; the train command does.
func NothingToResume(out string) error {
	for _, ckpt := range []string{out + ".ckpt", out + ".rounds.ckpt"} { // a run, or attack-and-train rounds
		if _, err := os.Stat(ckpt); err == nil {
			return nil
		}
		// A kill inside the checkpoint's save leaves it only as a copy.
		if _, ok := checkpoint.InterruptedCopy(ckpt); ok {
			return nil
		}
	}
	if _, err := os.Stat(filepath.Join(out, checkpoint.ConfigFile)); err != nil {
		return nil
	}
	return fmt.Errorf("nothing to resume: %s holds a finished model and %s.ckpt does not exist; train into another --out, or remove %s to start over",
		out, out, out)
}

// trainedParams are the parameters Run updates: the model's and the
// objective's own.
func trainedParams(m *model.Model, obj Objective) []*ag.Param {
	params := m.Net.Params()
	if ep, ok := obj.(ExtraParams); ok {
		params = append(params, ep.Params()...)
	}
	return params
}

// SaveCheckpoint writes m, the optimizer's state and extra (any JSON value)
// to dir, atomically, for schedules made of several Run calls that share
// an optimizer (FLAT's rounds) and must resume between them.
func SaveCheckpoint(dir string, m *model.Model, obj Objective, opz optim.Optimizer, seed int64, extra any) error {
	raw, err := json.Marshal(extra)
	if err != nil {
		return err
	}
	return save(dir, m, obj, opz, state{Seed: seed, Extra: raw})
}

// LoadCheckpoint restores what SaveCheckpoint wrote into m, opz and extra;
// ok is false when dir does not exist. The seed, model configuration,
// vocabulary and objective settings must match.
func LoadCheckpoint(dir string, m *model.Model, obj Objective, opz optim.Optimizer, seed int64, extra any) (ok bool, err error) {
	st := state{Seed: seed}
	if _, err := checkpoint.Recover(dir); err != nil {
		return false, fmt.Errorf("cannot resume: %w", err)
	}
	if ok, err = restore(dir, m, obj, trainedParams(m, obj), opz, &st); !ok || err != nil {
		return ok, err
	}
	if err := json.Unmarshal(st.Extra, extra); err != nil {
		return false, fmt.Errorf("cannot resume: %s: %w", dir, err)
	}
	return true, nil
}

// NewOptimizer builds the optimizer that opt describes, with Run's
// defaults for the zero values (Adam, lr 1e-3).
func NewOptimizer(opt Options) optim.Optimizer {
	_ = opt.defaults() // invalid options are reported by Run
	if opt.Optimizer == "sgd" {
		return optim.NewSGD(opt.LR, opt.Momentum, opt.WeightDecay)
	}
	var scale func(string) float64
	if len(opt.LRScale) > 0 {
		scale = func(name string) float64 { return opt.LRScale[name] }
	}
	if opt.Optimizer == "adamw" {
		return optim.NewAdam(optim.AdamConfig{LR: opt.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: opt.WeightDecay,
			Decoupled: true, NoDecay: optim.NoDecayBERT, LRScale: scale})
	}
	return optim.NewAdam(optim.AdamConfig{LR: opt.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: opt.WeightDecay, LRScale: scale})
}

// Run trains m with obj on the training examples, selecting on dev.
func Run(m *model.Model, obj Objective, trainSet, dev []Example, opt Options) (*Result, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if len(trainSet) == 0 {
		return nil, errors.New("no training examples")
	}
	if opt.Out == "" {
		return nil, errors.New("no output path for the model")
	}
	params := trainedParams(m, obj)
	opz := opt.Shared
	if opz == nil {
		opz = NewOptimizer(opt)
	}
	if p, ok := obj.(Prepared); ok {
		if err := p.Prepare(trainSet, StepsPerEpoch(len(trainSet), opt.BatchSize)); err != nil {
			return nil, err
		}
	}
	selectFrom := 1
	if g, ok := obj.(Selective); ok {
		if selectFrom = g.FirstSelectableEpoch(); selectFrom > opt.Epochs {
			return nil, fmt.Errorf("%s: only epochs from %d on can be kept (the earlier ones train without its whole objective), and the run has %d", obj.Name(), selectFrom, opt.Epochs)
		}
	}
	ckpt := opt.Out + ".ckpt"
	st := state{Seed: opt.Seed, Run: settingsOf(opt)}
	resumed := false
	if opt.Resume {
		// A kill in the middle of a save leaves the complete copy beside a
		// missing directory: put it back before looking for a checkpoint.
		for _, dir := range []string{ckpt, opt.Out} {
			r, err := checkpoint.Recover(dir)
			if err != nil {
				return nil, fmt.Errorf("cannot resume: %w", err)
			}
			if r.From != "" && opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "recovered %s from %s, left by a save that was interrupted\n", dir, r.From)
			}
		}
		if ok, err := restore(ckpt, m, obj, params, opz, &st); err != nil {
			return nil, err
		} else if ok {
			resumed = true
			st.Result.ResumedFrom = st.Epoch
			if st.Run != nil && opt.Progress != nil && st.Run.Epochs != opt.Epochs {
				fmt.Fprintf(opt.Progress, "extending the run from %d to %d epochs\n", st.Run.Epochs, opt.Epochs)
			}
			st.Run = settingsOf(opt)
			if opt.Progress != nil {
				if p := st.Partial; p != nil {
					fmt.Fprintf(opt.Progress, "resuming from %s in epoch %d after step %d\n", ckpt, p.Epoch, p.Step)
				} else {
					fmt.Fprintf(opt.Progress, "resuming from %s after epoch %d\n", ckpt, st.Epoch)
				}
			}
		}
	}
	var logw io.Writer
	if opt.LogPath != "" {
		if resumed {
			// Epochs after the checkpoint are trained again: their lines
			// (written before a kill that came ahead of the checkpoint) go.
			if err := trimLog(opt.LogPath, st.Epoch); err != nil {
				return nil, err
			}
		}
		f, err := os.OpenFile(opt.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		logw = f
	}
	minLen := m.Net.Enc.MinLen()
	tape := ag.NewTape()
	tape.Train = true
	for epoch := st.Epoch + 1; epoch <= opt.Epochs; epoch++ {
		lr := opt.LR
		for _, e := range opt.DecayEpochs {
			if epoch >= e {
				lr *= opt.DecayGamma
			}
		}
		opz.SetLR(lr)
		// Each epoch's randomness depends only on (seed, epoch), so a resumed
		// run draws exactly what an uninterrupted one would.
		rng := rand.New(rand.NewSource(opt.Seed*1_000_003 + int64(epoch)))
		var tapeSrc *seeded.Source
		tape.Rng, tapeSrc = seeded.New(opt.Seed*7_919 + int64(epoch))
		batches := Batches(trainSet, opt.BatchSize, rng, minLen)
		sched := opt.stepSchedule(len(batches)) // every epoch has the same number of batches
		bar := newProgress(opt.Progress, fmt.Sprintf("epoch %d/%d", epoch, opt.Epochs), len(batches))
		start, lastSave := time.Now(), time.Now()
		ep := partialEpoch{Epoch: epoch, Terms: map[string]float64{}}
		if p := st.Partial; p != nil && p.Epoch == epoch {
			ep = *p
			if ep.Terms == nil {
				ep.Terms = map[string]float64{}
			}
			tapeSrc.Skip(p.TapeDraws)
		}
		st.Partial = nil
		// savePartial checkpoints inside the epoch, after step (0-based).
		savePartial := func(step int) error {
			mid := ep
			mid.Step, mid.TapeDraws = step+1, tapeSrc.Draws()
			mid.Seconds += time.Since(start).Seconds()
			st.Partial = &mid
			err := save(ckpt, m, obj, opz, st)
			st.Partial, lastSave = nil, time.Now()
			return err
		}
		scored := false // an objective gave class logits this epoch
		for step := ep.Step; step < len(batches); step++ {
			b := batches[step]
			tape.Reset()
			if sc, ok := obj.(Scheduled); ok {
				sc.AtStep((epoch-1)*len(batches) + step)
			}
			if sched != nil {
				lr = sched.LR((epoch-1)*len(batches)+step, epoch)
				opz.SetLR(lr)
			}
			out, err := obj.Loss(tape, m.Net, b)
			if err != nil {
				return nil, fmt.Errorf("epoch %d step %d: %w", epoch, step+1, err)
			}
			loss := float64(out.Loss.Item())
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return nil, fmt.Errorf("epoch %d step %d: %s loss is %v (%s); stopping before writing a broken model (try a lower --lr or --clip)",
					epoch, step+1, obj.Name(), loss, badTerms(out.Terms))
			}
			tape.Backward(out.Loss)
			if opt.Clip > 0 {
				optim.ClipGradNorm(params, opt.Clip)
			}
			opz.Step(params)
			optim.ZeroGrad(params)
			ep.LossSum += loss * float64(b.B)
			for k, v := range out.Terms {
				ep.Terms[k] += float64(v) * float64(b.B)
			}
			if out.Logits != nil {
				c := out.Logits.Shape()[1]
				for i, y := range b.Labels {
					if nn.Argmax(out.Logits.Data()[i*c:(i+1)*c]) == y {
						ep.Correct++
					}
				}
			}
			ep.Seen += b.B
			// Objectives without class logits (sentence embeddings) have no
			// running accuracy to show.
			acc := math.NaN()
			if out.Logits != nil {
				scored = true
				acc = float64(ep.Correct) / float64(ep.Seen)
			}
			bar.update(step+1, ep.LossSum/float64(ep.Seen), acc)
			if global := (epoch-1)*len(batches) + step + 1; opt.Evaluate != nil && opt.EvalEvery > 0 && global%opt.EvalEvery == 0 && step+1 < len(batches) {
				score, err := opt.Evaluate(m)
				if err != nil {
					return nil, fmt.Errorf("epoch %d step %d: evaluation: %w", epoch, step+1, err)
				}
				st.Result.Evals = append(st.Result.Evals, StepScore{global, score})
				better := epoch >= selectFrom && (st.Result.BestEpoch == 0 || score > st.Result.BestDevAcc)
				if opt.Progress != nil {
					fmt.Fprintf(opt.Progress, "\nstep %d: score %.4f%s\n", global, score, map[bool]string{true: " *best*"}[better])
				}
				if better {
					st.Result.BestEpoch, st.Result.BestStep, st.Result.BestDevAcc = epoch, global, score
					m.Training = trainingRecord(opt, obj, st.Result)
					if err := m.Save(opt.Out); err != nil {
						return nil, err
					}
					if err := savePartial(step); err != nil {
						return nil, err
					}
				}
			}
			if opt.CheckpointEvery > 0 && step+1 < len(batches) && time.Since(lastSave) >= opt.CheckpointEvery {
				if err := savePartial(step); err != nil {
					return nil, err
				}
			}
		}
		bar.finish()
		terms := ep.Terms
		for k := range terms {
			terms[k] /= float64(ep.Seen)
		}
		es := EpochStats{Epoch: epoch, Steps: len(batches), TrainLoss: ep.LossSum / float64(ep.Seen),
			TrainAcc: float64(ep.Correct) / float64(ep.Seen), LR: lr, Seconds: ep.Seconds + time.Since(start).Seconds(), Terms: terms}
		switch {
		case opt.Evaluate != nil:
			var err error
			if es.DevAcc, err = opt.Evaluate(m); err != nil {
				return nil, fmt.Errorf("epoch %d: evaluation: %w", epoch, err)
			}
		case len(dev) > 0:
			es.DevAcc = Accuracy(m.Net, dev)
		}
		eligible := epoch >= selectFrom
		improved := eligible && ((len(dev) == 0 && opt.Evaluate == nil) || st.Result.BestEpoch == 0 || es.DevAcc > st.Result.BestDevAcc)
		if improved {
			es.Best = true
			st.Result.BestEpoch, st.Result.BestDevAcc, st.Result.BestStep = epoch, es.DevAcc, 0
			st.BadEpoch = 0
			m.Training = trainingRecord(opt, obj, st.Result)
			if err := m.Save(opt.Out); err != nil {
				return nil, err
			}
		} else if eligible {
			st.BadEpoch++
		}
		st.Result.Epochs = append(st.Result.Epochs, es)
		if opt.Progress != nil {
			trainAcc := ""
			if scored {
				trainAcc = fmt.Sprintf(" train acc %.4f", es.TrainAcc)
			}
			devText := fmt.Sprintf(" dev acc %.4f", es.DevAcc)
			switch {
			case opt.Evaluate != nil: // the caller's own score (STS-B Spearman for embed-train)
				devText = fmt.Sprintf(" dev score %.4f", es.DevAcc)
			case len(dev) == 0:
				devText = " (no dev set: the last epoch is kept)"
			}
			fmt.Fprintf(opt.Progress, "epoch %d: loss %.4f%s%s (%.1fs)%s\n",
				epoch, es.TrainLoss, trainAcc, devText, es.Seconds, map[bool]string{true: " *best*"}[es.Best])
		}
		if logw != nil {
			line, _ := json.Marshal(es)
			fmt.Fprintf(logw, "%s\n", line)
		}
		st.Epoch = epoch
		if opt.Patience > 0 && st.BadEpoch >= opt.Patience {
			st.Result.StoppedEarly = true
			break
		}
		if epoch < opt.Epochs || opt.KeepCheckpoint {
			if err := save(ckpt, m, obj, opz, st); err != nil {
				return nil, err
			}
		}
	}
	if !opt.KeepCheckpoint {
		os.RemoveAll(ckpt)
		checkpoint.RemoveLeftovers(ckpt)
	}
	// The run has written its model: leftovers of interrupted saves go.
	if err := checkpoint.RemoveLeftovers(opt.Out); err != nil {
		return nil, err
	}
	return &st.Result, nil
}

// trimLog drops the lines at the end of the JSONL metrics log at path that
// belong to epochs after keep, and a last line cut before its newline.
// Lines of earlier runs in a shared log stay.
func trimLog(path string, keep int) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	end := len(data)
	if end > 0 && data[end-1] != '\n' {
		end = bytes.LastIndexByte(data[:end], '\n') + 1
	}
	for end > 0 {
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		var line struct {
			Epoch int `json:"epoch"`
		}
		if json.Unmarshal(data[start:end], &line) != nil || line.Epoch <= keep {
			break
		}
		end = start
	}
	if end == len(data) {
		return nil
	}
	return checkpoint.WriteFileAtomic(path, data[:end], 0o644)
}

func badTerms(terms map[string]float32) string {
	var names []string
	for k, v := range terms {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			names = append(names, fmt.Sprintf("term %s = %v", k, v))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "no single term is non-finite"
	}
	return fmt.Sprint(names)
}

func trainingRecord(opt Options, obj Objective, r Result) map[string]any {
	rec := map[string]any{"objective": obj.Name(), "epochs": opt.Epochs, "batch": opt.BatchSize,
		"optimizer": opt.Optimizer, "lr": opt.LR, "seed": opt.Seed, "best_epoch": r.BestEpoch, "best_dev_acc": r.BestDevAcc}
	if opt.Clip > 0 {
		rec["clip"] = opt.Clip
	}
	if opt.WeightDecay > 0 {
		rec["weight_decay"] = opt.WeightDecay
	}
	if len(opt.LRScale) > 0 {
		rec["lr_scale"] = lrScaleText(opt.LRScale)
	}
	if opt.Schedule != "" {
		rec["schedule"], rec["warmup"] = opt.Schedule, opt.Warmup
	}
	for k, v := range opt.Info {
		rec[k] = v
	}
	return rec
}

// Accuracy is the share of examples the model classifies correctly.
func Accuracy(net *nn.Classifier, ex []Example) float64 {
	pred := Predict(net, ex)
	correct := 0
	for i, e := range ex {
		if pred[i] == e.Label {
			correct++
		}
	}
	return float64(correct) / float64(max(len(ex), 1))
}

// Predict returns the predicted class of each example.
func Predict(net *nn.Classifier, ex []Example) []int {
	seqs := make([][]int32, len(ex))
	for i, e := range ex {
		seqs[i] = e.IDs
	}
	probs := net.Predict(seqs)
	out := make([]int, len(ex))
	for i, p := range probs {
		out[i] = nn.Argmax(p)
	}
	return out
}

const (
	optimPrefix     = "optimizer/"
	objectivePrefix = "objective/" // a Stateful objective's tensors
)

func save(dir string, m *model.Model, obj Objective, opz optim.Optimizer, st state) error {
	st.Meta = m.Meta
	st.Meta.Net = m.Net.Cfg
	st.Objective, st.Settings = obj.Name(), objectiveSettings(obj)
	if r, ok := obj.(Random); ok {
		st.ObjectiveDraws = r.RandomDraws()
	}
	cfg, err := json.Marshal(st)
	if err != nil {
		return err
	}
	ts := m.Net.Tensors()
	for k, v := range opz.State() {
		ts[optimPrefix+k] = v
	}
	if s, ok := obj.(Stateful); ok {
		for k, v := range s.State() {
			ts[objectivePrefix+k] = v
		}
	}
	return checkpoint.Save(dir, &checkpoint.Bundle{Config: cfg, Vocab: m.VocabWords(), Tensors: ts})
}

// runSettings are the options a resumed run must share with the run it
// continues: each changes the numbers. The epochs may change (a run is
// extended, or stopped earlier) unless the learning-rate schedule spans
// them all. The length limit is compared through the model's Meta.
type runSettings struct {
	Epochs      int     `json:"epochs"`
	BatchSize   int     `json:"batch"`
	Optimizer   string  `json:"optimizer"`
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`
	Clip        float64 `json:"clip"`
	DecayEpochs []int   `json:"decay_epochs"`
	DecayGamma  float64 `json:"decay_gamma"`
	Schedule    string  `json:"schedule"`
	Warmup      float64 `json:"warmup"`
	LRScale     string  `json:"lr_scale,omitempty"`
}

func settingsOf(opt Options) *runSettings {
	return &runSettings{Epochs: opt.Epochs, BatchSize: opt.BatchSize, Optimizer: opt.Optimizer, LR: opt.LR, Momentum: opt.Momentum,
		WeightDecay: opt.WeightDecay, Clip: opt.Clip, DecayEpochs: opt.DecayEpochs, DecayGamma: opt.DecayGamma,
		Schedule: opt.Schedule, Warmup: opt.Warmup, LRScale: lrScaleText(opt.LRScale)}
}

// lrScaleText writes the scales in name order ("" for none).
func lrScaleText(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%g", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// differs names the first setting of now that differs from the saved run
// (epochs aside when they may change), or "".
func (saved *runSettings) differs(now *runSettings) string {
	a, b := *saved, *now
	if a.Schedule == "" && b.Schedule == "" {
		a.Epochs, b.Epochs = 0, 0 // extending or shortening a run is allowed
	}
	fields := []struct {
		name string
		x, y any
	}{
		{"--epochs (the linear schedule spans all of them)", a.Epochs, b.Epochs}, {"--batch", a.BatchSize, b.BatchSize},
		{"--optimizer", a.Optimizer, b.Optimizer}, {"--lr", a.LR, b.LR}, {"--momentum", a.Momentum, b.Momentum},
		{"--weight-decay", a.WeightDecay, b.WeightDecay}, {"--clip", a.Clip, b.Clip},
		{"--lr-decay-epochs", fmt.Sprint(a.DecayEpochs), fmt.Sprint(b.DecayEpochs)}, {"--lr-decay", a.DecayGamma, b.DecayGamma},
		{"--schedule", a.Schedule, b.Schedule}, {"--warmup", a.Warmup, b.Warmup}, {"--embed-lr-scale", a.LRScale, b.LRScale},
	}
	for _, f := range fields {
		if f.x != f.y {
			return fmt.Sprintf("%s: %v before, %v now", f.name, f.x, f.y)
		}
	}
	return ""
}

// restore loads a checkpoint if one exists; ok reports whether it did.
func restore(dir string, m *model.Model, obj Objective, params []*ag.Param, opz optim.Optimizer, st *state) (ok bool, err error) {
	var saved state
	b, ok, err := checkpoint.LoadRun(dir, &saved)
	if !ok || err != nil {
		if err != nil {
			err = fmt.Errorf("cannot resume: %w", err)
		}
		return false, err
	}
	if saved.Seed != st.Seed {
		return false, fmt.Errorf("cannot resume: %s was trained with seed %d, this run has seed %d", dir, saved.Seed, st.Seed)
	}
	d := ""
	if saved.Run != nil && st.Run != nil {
		d = saved.Run.differs(st.Run)
	}
	if d == "" && saved.Meta.MaxLen != m.MaxLen {
		d = fmt.Sprintf("--max-len: %d before, %d now", saved.Meta.MaxLen, m.MaxLen)
	}
	if d != "" {
		return false, fmt.Errorf("cannot resume: %s was trained with other settings (%s); give the same ones, or remove it to start afresh", dir, d)
	}
	a, _ := json.Marshal(saved.Meta.Net)
	c, _ := json.Marshal(m.Net.Cfg)
	if string(a) != string(c) || !slices.Equal(b.Vocab, m.VocabWords()) {
		return false, fmt.Errorf("cannot resume: %s holds a different model configuration or vocabulary; remove it to start afresh", dir)
	}
	if saved.Objective != "" && saved.Objective != obj.Name() {
		return false, fmt.Errorf("cannot resume: %s was trained with objective %s, this run uses %s; remove it to start afresh", dir, saved.Objective, obj.Name())
	}
	if now := objectiveSettings(obj); saved.Settings != nil && string(saved.Settings) != string(now) {
		return false, fmt.Errorf("cannot resume: %s was trained with %s settings %s, this run has %s; remove it to start afresh", dir, obj.Name(), saved.Settings, now)
	}
	rest, opt := b.Split(optimPrefix)
	b.Tensors = rest
	net, objState := b.Split(objectivePrefix)
	if err := m.Net.LoadTensors(net); err != nil {
		return false, fmt.Errorf("cannot resume: %s: %w", dir, err)
	}
	if err := optim.MatchState(opt, params); err != nil {
		return false, fmt.Errorf("cannot resume: %s: %w", dir, err)
	}
	if err := opz.LoadState(opt); err != nil {
		return false, fmt.Errorf("cannot resume: %s: %w", dir, err)
	}
	if r, ok := obj.(Random); ok {
		r.SkipRandom(saved.ObjectiveDraws)
	}
	if s, ok := obj.(Stateful); ok {
		if len(objState) == 0 {
			objState = nil
		}
		if err := s.SetState(objState); err != nil {
			return false, fmt.Errorf("cannot resume: %s: %w", dir, err)
		}
	}
	*st = saved
	return true, nil
}

// FineTuneDefaults are the usual settings for fine-tuning a pretrained
// transformer (Devlin et al. 2019; Hugging Face's run_glue): 3 epochs of
// batches of 32, AdamW at 2e-5 with weight decay 0.01 (biases and
// LayerNorms exempt), a linear schedule warming up over the first 10 % of
// steps, gradient norm clipped at 1.
func FineTuneDefaults() Options {
	return Options{Epochs: 3, BatchSize: 32, Optimizer: "adamw", LR: 2e-5, WeightDecay: 0.01, Clip: 1,
		Schedule: "linear", Warmup: 0.1}
}
