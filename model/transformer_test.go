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
