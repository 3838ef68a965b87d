package train

import (
	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
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

// Random is implemented by objectives that draw random numbers of their
// own (FTML's negatives, ASCC's starting points). Checkpoints record
// RandomDraws, and a resume calls SkipRandom with it on the freshly built
// objective, so the stream continues instead of starting over.
type Random interface {
	RandomDraws() uint64
	SkipRandom(n uint64)
}

// Standard is plain cross-entropy training.
type Standard struct{}

// Name implements Objective.
func (Standard) Name() string { return "standard" }

// Loss is the mean cross-entropy of the batch.
func (Standard) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (Output, error) {
	logits := m.Forward(t, b)
	loss := t.CrossEntropy(logits, b.Labels, nil)
	return Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": loss.Item()}}, nil
}
