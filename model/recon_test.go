package model

import (
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// headLogits are the reconstruction head's logits for tinyTexts.
func headLogits(t *testing.T, m *Model) []float32 {
	t.Helper()
	if m.Net.Rec == nil {
		t.Fatal("the model has no reconstruction head")
	}
	var seqs [][]int32
	for _, s := range tinyTexts {
		seqs = append(seqs, m.Encode(s))
	}
	b := nn.MakeBatch(seqs, nil, 1)
	tp := ag.NewTape()
	tokens, _ := m.Net.Encode(tp, m.Net.Embed(tp, b), b.Lengths)
	logits, _ := m.Net.Reconstruct(tp, tokens, b.Lengths)
	return logits.Data()
}

// A model with a reconstruction head saves and loads with it (the same
// classifier and head logits); it exports to Hugging Face as the
// masked-LM head and imports back with Reconstructor, and without it as
// the plain classifier; a checkpoint without a masked-LM head gets a
// fresh one.
func TestReconstructorSaveLoadExport(t *testing.T) {
	m := tinyTransformer(t)
	if err := m.Net.AddReconstructor(rand.New(rand.NewSource(4))); err != nil {
		t.Fatal(err)
	}
	// Trained-looking head weights, so that a load that kept the fresh
	// initialisation would show.
	r := rand.New(rand.NewSource(5))
	for _, p := range m.Net.Rec.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] += float32(0.1 * r.NormFloat64())
		}
	}
	want := headLogits(t, m)
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Net.Cfg.Reconstructor {
		t.Error("the loaded config lost the head")
	}
	samePredictions(t, "save/load", m, back)
	if d := tensor.MaxAbsDiff(headLogits(t, back), want); d != 0 {
		t.Errorf("save/load: head logits differ by %g", d)
	}

	hfDir := filepath.Join(t.TempDir(), "hf")
	if err := m.ExportHF(hfDir, false); err != nil {
		t.Fatal(err)
	}
	hf, err := checkpoint.LoadHF(hfDir)
	if err != nil {
		t.Fatal(err)
	}
	if !hf.HasMLMHead || !hf.MLMDecoderTied || !hf.HasClassifier {
		t.Errorf("export: masked-LM head %v (tied %v), classifier %v", hf.HasMLMHead, hf.MLMDecoderTied, hf.HasClassifier)
	}
	imp, err := ImportHF(hfDir, ImportOptions{Reconstructor: true, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	samePredictions(t, "export/import", m, imp)
	if d := tensor.MaxAbsDiff(headLogits(t, imp), want); d > 1e-6 {
		t.Errorf("export/import: head logits differ by %g", d)
	}
	if imp.Training["reconstructor_from_checkpoint"] != true || imp.Training["import_warnings"] != nil {
		t.Errorf("import record %v", imp.Training)
	}
	plain, err := ImportHF(hfDir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	samePredictions(t, "export/import without the head", m, plain)
	if plain.Net.Rec != nil || plain.Net.Cfg.Reconstructor {
		t.Error("an import without Reconstructor has a head")
	}

	// A checkpoint without a masked-LM head: a fresh head, N(0, 0.02).
	noHead := filepath.Join(t.TempDir(), "hf2")
	if err := plain.ExportHF(noHead, false); err != nil {
		t.Fatal(err)
	}
	fresh, err := ImportHF(noHead, ImportOptions{Reconstructor: true, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Training["reconstructor_from_checkpoint"] != false || tensor.MaxAbsDiff(fresh.Net.Rec.Bias.Value.Data, make([]float32, fresh.Net.Cfg.VocabSize)) != 0 {
		t.Errorf("fresh head: record %v", fresh.Training)
	}
	samePredictions(t, "import with a fresh head", m, fresh)
}
