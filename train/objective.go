package train

import (
	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// Objective is a training loss. Defenses are objectives: given a batch and
// the model they return the loss to minimise, and may keep state (synonym
// tables, memory banks) and parameters of their own.
type Objective interface {
	Name() string
	Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (Output, error)
}

// Output is what an objective computed for one batch.
type Output struct {
	Loss *ag.Var
	// Logits of the clean batch, for the running accuracy (may be nil).
	Logits *ag.Var
	// Terms are the named parts of Loss, checked for NaN and logged.
	Terms map[string]float32
}

// ExtraParams is implemented by objectives that train parameters beyond the
// classifier's (a mask network, a projection head).
type ExtraParams interface {
	Params() []*ag.Param
}

// Recorded is implemented by objectives with settings of their own: Info
// goes into the trained model's record and into checkpoints, which refuse
// a resume under other settings.
type Recorded interface {
	Info() map[string]any
}

// Scheduled is implemented by objectives whose settings follow a schedule
// over optimiser steps (IBP's κ and ε ramps). Run calls AtStep with the
// 0-based step of the run before each training Loss, so a resumed run
// continues the schedule where the interrupted one stopped.
type Scheduled interface {
	AtStep(step int)
}

// Stateful is implemented by objectives that keep state beyond their
// settings and random draws (SPGD's neighbour table, a memory bank):
// checkpoints hold State's tensors, and a resume gives them back to
// SetState on the freshly built objective (nil when the checkpoint holds
// none), so the resumed run computes what an uninterrupted one would.
type Stateful interface {
	State() map[string]*tensor.Tensor
	SetState(map[string]*tensor.Tensor) error
}

// Prepared is implemented by objectives that need the training set before
// the first step (CARL's memory banks hold a row per example and draw
// negatives by label). Run calls Prepare before restoring a checkpoint,
// with the training set in its order (batches' Index refers to it) and
// the number of steps in an epoch.
type Prepared interface {
	Prepare(trainSet []Example, stepsPerEpoch int) error
}

// Selective is implemented by objectives whose early epochs train
// something else (CARL before its contrastive loss joins): epochs before
// FirstSelectableEpoch (after Prepare) never become the kept model, so a
// dev-selected model has trained with the whole objective.
type Selective interface {
	FirstSelectableEpoch() int
}

// Random is implemented by objectives that draw random numbers of their
// own (FTML's negatives, ASCC's starting points). Checkpoints record
// RandomDraws, and a resume calls SkipRandom with it on the freshly built
// objective, so the stream continues instead of starting over.
type Random interface {
	RandomDraws() uint64
	SkipRandom(n uint64)
}

// Standard is plain cross-entropy training.
type Standard struct {
	// ProbInputs feeds the softmax probabilities, not the logits, into
	// the cross-entropy (ClassLoss).
	ProbInputs bool
}

// Name implements Objective.
func (Standard) Name() string { return "standard" }

// Info implements Recorded: empty (nothing recorded) unless ProbInputs.
func (s Standard) Info() map[string]any { return ProbInputsInfo(s.ProbInputs, nil) }

// Loss is the mean cross-entropy of the batch.
func (s Standard) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (Output, error) {
	logits := m.Forward(t, b)
	loss := ClassLoss(t, logits, b.Labels, s.ProbInputs)
	return Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": loss.Item()}}, nil
}

// ClassLoss is the mean cross-entropy of labels given logits. With
// probInputs it is the cross-entropy of softmax(logits) treated as logits,
// a double softmax: the FLAT reference code's CNN and LSTM feed their
// softmax outputs to a cross-entropy loss (flat.md spec F9). That loss
// cannot fall below log(1 + (C−1)/e) and its gradient fades as the
// probabilities saturate: at a high learning rate a model can saturate
// to one class and stop learning (docs/flat.md).
func ClassLoss(t *ag.Tape, logits *ag.Var, labels []int, probInputs bool) *ag.Var {
	if probInputs {
		logits = t.Softmax(logits)
	}
	return t.CrossEntropy(logits, labels, nil)
}

// ProbInputsInfo adds prob_inputs_to_ce to an objective's recorded
// settings only when it is on, so records and checkpoints of runs
// without it are unchanged.
func ProbInputsInfo(on bool, info map[string]any) map[string]any {
	if info == nil {
		info = map[string]any{}
	}
	if on {
		info["prob_inputs_to_ce"] = true
	}
	return info
}
