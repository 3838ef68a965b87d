package defense

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/internal/realdata"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

// RAR on the shared all-MiniLM-L6-v2 checkpoint (spec §9's base model,
// which has no masked-LM head): the imported model gets a fresh head of
// H·e + e + 2e + V weights decoding with the checkpoint's own word
// embeddings, L_R starts within 1 nat of ln V (check 10), and a RAR step
// runs, timed against FreeLB's.
func TestRARMiniLM(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "models", "all-MiniLM-L6-v2")
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		t.Skipf("shared checkpoint missing: %v", err)
	}
	classes := []string{"negative", "positive"}
	plain, err := model.ImportHF(dir, model.ImportOptions{Classes: classes})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.ImportHF(dir, model.ImportOptions{Classes: classes, Reconstructor: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	count := func(m *nn.Classifier) int {
		n := 0
		for _, p := range m.Params() {
			n += len(p.Value.Data)
		}
		return n
	}
	h, v := m.Net.Cfg.EmbedDim, m.Net.Cfg.VocabSize
	if d := count(m.Net) - count(plain.Net); d != h*h+h+2*h+v {
		t.Errorf("the head adds %d weights, want %d", d, h*h+h+2*h+v)
	}
	if m.Training["reconstructor_from_checkpoint"] != false {
		t.Errorf("import record %v", m.Training)
	}
	texts := []string{"a gripping, beautifully acted film", "the plot is thin and the jokes fall flat",
		"I would not watch it again.", "an unexpectedly moving story about two brothers"}
	var ex []train.Example
	for i, s := range texts {
		ex = append(ex, train.Example{IDs: m.Encode(s), Label: i % 2})
	}
	b := exBatch(ex, 1)
	tp := ag.NewTape()
	tokens, _ := m.Net.Encode(tp, m.Net.Embed(tp, b), b.Lengths)
	lr, _, _ := m.Net.ReconstructionLoss(tp, tokens, b)
	if lv := math.Log(float64(v)); math.Abs(float64(lr.Item())-lv) > 1 {
		t.Errorf("L_R at initialisation %.3f, ln V %.3f", lr.Item(), lv)
	}
	step := func(obj train.Objective) time.Duration {
		start := time.Now()
		tp := &ag.Tape{Train: true, Rng: ag.NewTape().Rng}
		out, err := obj.Loss(tp, m.Net, b)
		if err != nil {
			t.Fatal(err)
		}
		tp.Backward(out.Loss)
		for _, p := range m.Net.Params() {
			p.ZeroGrad()
		}
		if l := out.Loss.Item(); math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			t.Fatalf("%s loss %v", obj.Name(), l)
		}
		return time.Since(start)
	}
	f, _ := NewFreeLB(DefaultFreeLB())
	r, _ := NewRAR(DefaultRAR())
	step(r) // warm up
	tf, tr := step(f), step(r)
	t.Logf("L_R at initialisation %.3f (ln V %.3f); one step on %d texts: FreeLB %v, RAR %v (×%.2f)",
		lr.Item(), math.Log(float64(v)), len(texts), tf, tr, float64(tr)/float64(tf))
}
