package model

import (
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// tinyTransformer is a random 2-layer BERT reading word pieces of a small
// vocabulary, classifying into two classes with the pooler.
func tinyTransformer(t *testing.T) *Model {
	t.Helper()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad", "not", "play", "##ing", ",", "."}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 16, 32, "pooler", true
	cfg.Transformer, cfg.EmbedDim = &tc, 8
	opts := wp.Options()
	m, err := NewTransformer(Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"neg", "pos"}, Pieces: &opts}, wp, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var tinyTexts = []string{"the movie was good", "The movie was NOT good.", "playing", "bad , bad , bad", "", "unknownword"}

func samePredictions(t *testing.T, how string, a, b *Model) {
	t.Helper()
	pa, pb := a.PredictTexts(tinyTexts), b.PredictTexts(tinyTexts)
	for i := range pa {
		if d := tensor.MaxAbsDiff(pa[i].Probs, pb[i].Probs); d > 1e-6 || pa[i].Label != pb[i].Label {
			t.Errorf("%s: %q: %v (%s) vs %v (%s)", how, tinyTexts[i], pa[i].Probs, pa[i].Label, pb[i].Probs, pb[i].Label)
		}
	}
}

// TestTransformerSaveLoadAndExport: a transformer model survives Save/Load
// and ExportHF/ImportHF with the same predictions, word pieces and classes.
func TestTransformerSaveLoadAndExport(t *testing.T) {
	m := tinyTransformer(t)
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	samePredictions(t, "save/load", m, back)
	if back.Pieces == nil || !back.Vocab.Open() || back.Encode("playing")[2] != 12 {
		t.Fatalf("loaded model reads %v", back.Encode("playing"))
	}
	hfDir := filepath.Join(t.TempDir(), "hf")
	if err := m.ExportHF(hfDir, false); err != nil {
		t.Fatal(err)
	}
	imp, err := ImportHF(hfDir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	samePredictions(t, "export/import", m, imp)
	if strings.Join(imp.Classes, ",") != "neg,pos" || imp.EncoderOnly() {
		t.Errorf("imported classes %v", imp.Classes)
	}
	// A model pooling otherwise is refused, as is one without a task.
	m.Net.Enc.(*nn.Transformer).Cfg.Pool = "mean"
	if err := m.ExportHF(filepath.Join(t.TempDir(), "x"), false); err == nil || !strings.Contains(err.Error(), "pooler") {
		t.Errorf("export of a mean-pooling model: %v", err)
	}
}

// TestImportHFErrors: a vocabulary that does not match the embedding table,
// missing tokenizer files and a bad max length are clear errors.
func TestImportHFErrors(t *testing.T) {
	m := tinyTransformer(t)
	hfDir := filepath.Join(t.TempDir(), "hf")
	if err := m.ExportHF(hfDir, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportHF(hfDir, ImportOptions{MaxLen: 100}); err == nil || !strings.Contains(err.Error(), "max length 100") {
		t.Errorf("max length beyond the positions: %v", err)
	}
	vocabPath := filepath.Join(hfDir, "vocab.txt")
	v, _ := os.ReadFile(vocabPath)
	if err := os.WriteFile(vocabPath, append(v, []byte("extra\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportHF(hfDir, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "vocab_size") {
		t.Errorf("vocabulary one longer than the table: %v", err)
	}
	os.Remove(vocabPath)
	os.Remove(filepath.Join(hfDir, "tokenizer.json"))
	if _, err := ImportHF(hfDir, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "vocab.txt") {
		t.Errorf("no tokenizer files: %v", err)
	}
}

// TestLoadRefusesIncompleteTokenizerRecord: a model whose WordPiece
// settings lack a key (an older spelling, a hand edit) is refused, not read
// with the missing setting false.
func TestLoadRefusesIncompleteTokenizerRecord(t *testing.T) {
	m := tinyTransformer(t)
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []struct{ from, to, want string }{
		{`"chinese_chars": true`, `"ChineseChars": true`, `lacks "chinese_chars"`},
		{`"chinese_chars": true`, `"chinese_chars": true, "cjk": true`, "unknown field"},
		{`"chinese_chars": true,`, ``, `lacks "chinese_chars"`},
	} {
		bad := strings.Replace(string(raw), edit.from, edit.to, 1)
		if bad == string(raw) {
			t.Fatalf("config has no %s:\n%s", edit.from, raw)
		}
		// The config digest catches any edit; without it (a config from
		// before digests, or written by hand) the record is still checked.
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "config_sha256") {
			t.Errorf("edit %q with the digest in place: %v", edit.to, err)
		}
		bad = regexp.MustCompile(`"config_sha256": "[0-9a-f]+",\s*`).ReplaceAllString(bad, "")
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), edit.want) {
			t.Errorf("edit %q: %v", edit.to, err)
		}
	}
}

// A transformer with FLAT's word mask: ImportHF attaches a fresh mask to a
// checkpoint (which has none), Save/Load round-trip it with the same
// predictions and word importances, and ExportHF refuses it by name.
func TestMaskedTransformerImportSaveLoad(t *testing.T) {
	hfDir := filepath.Join(t.TempDir(), "hf")
	if err := tinyTransformer(t).ExportHF(hfDir, false); err != nil {
		t.Fatal(err)
	}
	plain, err := ImportHF(hfDir, ImportOptions{Classes: []string{"neg", "pos"}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ImportHF(hfDir, ImportOptions{Classes: []string{"neg", "pos"}, Seed: 4, Mask: true, MaskHidden: 5})
	if err != nil {
		t.Fatal(err)
	}
	if m.Net.Mask == nil || m.Net.StateMasked() == nil || m.Net.Mask.Hidden.W.Value.Shape[0] != 8 || m.Net.Mask.Hidden.W.Value.Shape[1] != 5 {
		t.Fatalf("imported mask %+v", m.Net.Mask)
	}
	if d := tensor.MaxAbsDiff(m.Net.Emb.W.Value.Data, plain.Net.Emb.W.Value.Data); d != 0 {
		t.Errorf("the mask changed the imported word embeddings by %g", d)
	}
	if _, err := ImportHF(hfDir, ImportOptions{Mask: true, MaskHidden: -1}); err == nil {
		t.Error("a negative mask width was accepted")
	}
	// Weights 30× BERT's initial scale, so that attention and the head
	// see the states' scaling (each layer's LayerNorm hides a scaling that
	// tiny random attention weights barely mix), and a mask of spread φ.
	for _, p := range m.Net.Params() {
		if strings.HasSuffix(p.Name, ".weight") && !strings.Contains(p.Name, "LayerNorm") && !strings.HasPrefix(p.Name, "mask.") {
			for i := range p.Value.Data {
				p.Value.Data[i] *= 30
			}
		}
	}
	for i := range m.Net.Mask.Out.W.Value.Data {
		m.Net.Mask.Out.W.Value.Data[i] *= 10
	}
	unmasked := *m.Net
	unmasked.Mask = nil
	seq := [][]int32{m.Encode(tinyTexts[0])}
	if pm, pu := m.Net.Predict(seq), unmasked.Predict(seq); tensor.MaxAbsDiff(pm[0], pu[0]) < 1e-3 {
		t.Fatalf("the word mask barely changes a prediction (%v vs %v): the round trip cannot tell it was lost", pm[0], pu[0])
	}
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Net.Mask == nil || !back.Net.Cfg.Mask {
		t.Fatal("the loaded model has no word mask")
	}
	samePredictions(t, "masked save/load", m, back)
	a, b := m.Net.WordImportance(), back.Net.WordImportance()
	if len(a) != 15 || tensor.MaxAbsDiff(a, b) != 0 {
		t.Errorf("word importances %v, after loading %v", a, b)
	}
	if err := m.ExportHF(filepath.Join(t.TempDir(), "x"), false); err == nil || !strings.Contains(err.Error(), "word mask") {
		t.Errorf("export of a masked model: %v", err)
	}
}
