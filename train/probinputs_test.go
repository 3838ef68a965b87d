package train

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/tensor"
)

// The double softmax is CE(softmax(softmax(z))): checked against the value
// written out by hand and against finite differences.
func TestClassLossProbInputs(t *testing.T) {
	logits := tensor.From([]float32{2, -1, 0.5, 0.3, 0.1, -0.2}, 2, 3)
	labels := []int{0, 2}
	want := 0.0
	for r := 0; r < 2; r++ {
		row := logits.Data[3*r : 3*r+3]
		p := softmax64(row)
		q := softmax64([]float32{float32(p[0]), float32(p[1]), float32(p[2])})
		want -= math.Log(q[labels[r]]) / 2
	}
	tp := ag.NewTape()
	got := float64(ClassLoss(tp, tp.Leaf(logits), labels, true).Item())
	if math.Abs(got-want) > 1e-5 {
		t.Fatalf("double-softmax loss %.6f, by hand %.6f", got, want)
	}
	plain := float64(ClassLoss(tp, tp.Leaf(logits), labels, false).Item())
	if math.Abs(plain-got) < 1e-3 {
		t.Fatalf("probInputs does not change the loss (%.6f vs %.6f)", got, plain)
	}
	// Its floor: no logits bring it below log(1 + (C−1)/e).
	sure := tensor.From([]float32{40, -40, -40}, 1, 3)
	floor := math.Log(1 + 2/math.E)
	if v := float64(ClassLoss(tp, tp.Leaf(sure), []int{0}, true).Item()); math.Abs(v-floor) > 1e-5 {
		t.Errorf("saturated double-softmax loss %.6f, want the floor %.6f", v, floor)
	}
	if err := ag.GradCheck([]*tensor.Tensor{logits}, 1e-3, 1e-2, func(tp *ag.Tape, in []*ag.Var) *ag.Var {
		return ClassLoss(tp, in[0], labels, true)
	}); err != nil {
		t.Error(err)
	}
}

func softmax64(row []float32) []float64 {
	out := make([]float64, len(row))
	var s float64
	for i, v := range row {
		out[i] = math.Exp(float64(v))
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// Plain standard training records no settings (its checkpoints and model
// records are as before the switch existed); the double softmax is
// recorded, and a checkpoint refuses to resume under the other loss.
func TestProbInputsRecordedAndResumeChecked(t *testing.T) {
	if len(Standard{}.Info()) != 0 || objectiveSettings(Standard{}) != nil {
		t.Fatalf("plain standard records settings: %v", Standard{}.Info())
	}
	m, tr, dv := setup(t, "cnn", 1)
	opt := Options{Epochs: 2, BatchSize: 16, Seed: 9, Out: filepath.Join(t.TempDir(), "m"), KeepCheckpoint: true}
	if _, err := Run(m, Standard{ProbInputs: true}, tr, dv, opt); err != nil {
		t.Fatal(err)
	}
	b, err := checkpoint.Load(opt.Out + ".ckpt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b.Config), `"prob_inputs_to_ce":true`) {
		t.Errorf("checkpoint does not record the double softmax: %s", b.Config)
	}
	opt.Resume, opt.Epochs = true, 3
	m, tr, dv = setup(t, "cnn", 1)
	if _, err := Run(m, Standard{}, tr, dv, opt); err == nil || !strings.Contains(err.Error(), "prob_inputs_to_ce") {
		t.Errorf("resume with plain CE: got %v, want a refusal naming prob_inputs_to_ce", err)
	}
}

// The double softmax trains too, to other weights than plain CE.
func TestProbInputsTrainsOtherWeights(t *testing.T) {
	var w [2][]float32
	var acc [2]float64
	for i, on := range []bool{false, true} {
		m, tr, dv := setup(t, "cnn", 1)
		res, err := Run(m, Standard{ProbInputs: on}, tr, dv, Options{Epochs: 8, BatchSize: 16, LR: 0.01, Seed: 9, Out: filepath.Join(t.TempDir(), "m")})
		if err != nil {
			t.Fatal(err)
		}
		w[i], acc[i] = weights(m), res.BestDevAcc
	}
	same := true
	for j := range w[0] {
		same = same && w[0][j] == w[1][j]
	}
	if same {
		t.Error("the double softmax trained the same weights as plain CE")
	}
	t.Logf("dev accuracy: plain CE %.3f, double softmax %.3f", acc[0], acc[1])
	if acc[1] < 0.8 {
		t.Errorf("double-softmax dev accuracy %.3f on the generated task (plain CE %.3f)", acc[1], acc[0])
	}
}
