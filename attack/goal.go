package attack

import (
	"fmt"

	"github.com/textarmor/textarmor/nn"
)

// Goal decides success and scores candidates (higher = closer to success).
type Goal interface {
	Name() string
	Score(probs []float32, label int) float64
	Achieved(probs []float32, label int) bool
}

// Untargeted succeeds when the predicted class differs from the label;
// its score is 1 − p_label.
type Untargeted struct{}

// Name implements Goal.
func (Untargeted) Name() string { return "untargeted-classification" }

// Score implements Goal.
func (Untargeted) Score(p []float32, y int) float64 { return 1 - float64(p[y]) }

// Achieved implements Goal.
func (Untargeted) Achieved(p []float32, y int) bool { return nn.Argmax(p) != y }

// Targeted succeeds when the predicted class is Class; its score is
// p_Class.
type Targeted struct{ Class int }

// Name implements Goal.
func (g Targeted) Name() string { return fmt.Sprintf("targeted-classification(%d)", g.Class) }

// Score implements Goal.
func (g Targeted) Score(p []float32, _ int) float64 {
	if g.Class < 0 || g.Class >= len(p) {
		return 0
	}
	return float64(p[g.Class])
}

// Achieved implements Goal.
func (g Targeted) Achieved(p []float32, y int) bool { return nn.Argmax(p) == g.Class && g.Class != y }

// HardLabel is an untargeted goal that sees only the predicted label: its
// score is 1 when the label differs and 0 otherwise, so a search gets no
// probability information.
type HardLabel struct{}

// Name implements Goal.
func (HardLabel) Name() string { return "hard-label-untargeted" }

// Score implements Goal.
func (HardLabel) Score(p []float32, y int) float64 {
	if nn.Argmax(p) != y {
		return 1
	}
	return 0
}

// Achieved implements Goal.
func (HardLabel) Achieved(p []float32, y int) bool { return nn.Argmax(p) != y }
