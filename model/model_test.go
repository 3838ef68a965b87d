package model

import (
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	vocab := text.BuildVocab([][]string{{"good", "film"}, {"bad", "film"}}, 1, 0)
	for _, arch := range nn.Archs {
		cfg := nn.DefaultConfig(arch)
		cfg.EmbedDim, cfg.Filters, cfg.Hidden = 8, 4, 4
		m, err := New(Meta{Net: cfg, Tokenizer: "flat", MaxLen: 10, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), arch)
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		m2, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		// The digest computed in memory is the one Save records.
		want, err := checkpoint.WeightsDigest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.WeightsDigest(); err != nil || got != want {
			t.Fatalf("%s: WeightsDigest %q (%v), config.json records %q", arch, got, err, want)
		}
		if got, err := m2.WeightsDigest(); err != nil || got != want {
			t.Fatalf("%s: WeightsDigest after reload %q (%v), want %q", arch, got, err, want)
		}
		texts := []string{"A good film!", "bad", "", "unknown words only"}
		p1, p2 := m.PredictTexts(texts), m2.PredictTexts(texts)
		for i := range p1 {
			if p1[i].Label != p2[i].Label || tensor.MaxAbsDiff(p1[i].Probs, p2[i].Probs) != 0 {
				t.Fatalf("%s: prediction %d changed after reload", arch, i)
			}
		}
		if p1[0].KnownTokens != 2 || p1[3].KnownTokens != 0 {
			t.Fatalf("%s: known tokens %d and %d, want 2 and 0", arch, p1[0].KnownTokens, p1[3].KnownTokens)
		}
		if got := m2.Encode("A good film!"); len(got) != 3 || got[0] != text.UnkID || got[1] != vocab.ID("good") {
			t.Fatalf("encode after reload: %v", got)
		}
	}
}

func TestLoadRejectsMismatchedVocab(t *testing.T) {
	vocab := text.BuildVocab([][]string{{"a", "b"}}, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 4, 2
	m, _ := New(Meta{Net: cfg, Tokenizer: "flat", MaxLen: 5, Classes: []string{"x", "y"}}, vocab, rand.New(rand.NewSource(1)))
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(`["<pad>","<unk>","a"]`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("want an error naming the model, got %v", err)
	}
}

// TestLoadChecksSizesBeforeBuilding: a config whose sizes need far more
// weights than the file holds is refused before the network is built (an
// embed_dim of 1e9 used to allocate until memory ran out).
func TestLoadChecksSizesBeforeBuilding(t *testing.T) {
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 8, 4
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "bad"})
	m, err := New(Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 10, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	raw, _ := os.ReadFile(path)
	bad := regexp.MustCompile(`"embed_dim": 8`).ReplaceAllString(string(raw), `"embed_dim": 1000000000`)
	bad = regexp.MustCompile(`"config_sha256": "[0-9a-f]+",\s*`).ReplaceAllString(bad, "") // as an older or hand-written config
	if bad == string(raw) {
		t.Fatal("no embed_dim in the config")
	}
	os.WriteFile(path, []byte(bad), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "sizes need") {
		t.Errorf("embed_dim 1e9: %v", err)
	}
}

// TestLoadRefusesHugeWeights: a finite weight near float32's limit (found
// by FuzzLoad: -2.9e38 in a CNN filter) overflowed the forward pass and
// predicted NaN with exit code 0; Load refuses it, naming the tensor.
func TestLoadRefusesHugeWeights(t *testing.T) {
	vocab := text.BuildVocab([][]string{{"good", "film"}, {"bad", "film"}}, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 4, 2
	m, err := New(Meta{Net: cfg, Tokenizer: "flat", MaxLen: 5, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	m.Net.Emb.W.Value.Data[5] = -2.9e38
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "index 5") || !strings.Contains(err.Error(), "beyond") {
		t.Fatalf("Load of a model with a weight of -2.9e38: %v", err)
	}
}

// TestSetEmbeddings: the file's vectors replace their words' rows; a word
// the file lacks keeps its row, padding stays zero, and vectors of another
// size are refused.
func TestSetEmbeddings(t *testing.T) {
	vocab := text.BuildVocab([][]string{{"good", "film"}}, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 2, 2
	m, err := New(Meta{Net: cfg, Tokenizer: "flat", MaxLen: 5, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v.txt")
	os.WriteFile(path, []byte("good 1 2\nother 5 5\n"), 0o644)
	vs, err := text.LoadVectors(path, vocab)
	if err != nil {
		t.Fatal(err)
	}
	film := append([]float32(nil), m.Net.Emb.W.Value.Data[2*int(vocab.ID("film")):2*int(vocab.ID("film"))+2]...)
	n, err := m.SetEmbeddings(vs)
	if err != nil || n != 1 {
		t.Fatalf("SetEmbeddings = %d, %v", n, err)
	}
	tab := m.Net.Emb.W.Value.Data
	if g := vocab.ID("good"); tab[2*g] != 1 || tab[2*g+1] != 2 {
		t.Errorf("good's row %v", tab[2*g:2*g+2])
	}
	if f := vocab.ID("film"); tab[2*f] != film[0] || tab[2*f+1] != film[1] || tab[0] != 0 || tab[1] != 0 {
		t.Errorf("film's row or padding changed")
	}
	os.WriteFile(path, []byte("good 1 2 3\n"), 0o644)
	if vs, err = text.LoadVectors(path, vocab); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetEmbeddings(vs); err == nil {
		t.Error("3-dimensional vectors set into a 2-dimensional table")
	}
}
