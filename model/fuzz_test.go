package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// fuzzVocab serves both the word models (which need <pad> and <unk> first)
// and the transformer (which needs BERT's special pieces), so that one
// vocab.json fits every model FuzzLoad starts from.
var fuzzVocab = []string{text.PadWord, text.UnkWord, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film", "bad", "##s"}

// fuzzModels builds small valid models of each kind and returns their
// config.json and model.safetensors files.
func fuzzModels(t testing.TB) (configs, weights [][]byte) {
	vocab, err := text.NewVocab(fuzzVocab)
	if err != nil {
		t.Fatal(err)
	}
	classes := []string{"neg", "pos"}
	var models []*Model
	for _, arch := range []string{"cnn", "bilstm", "lstm"} {
		cfg := nn.DefaultConfig(arch)
		cfg.EmbedDim, cfg.Filters, cfg.Hidden, cfg.Widths = 4, 2, 3, []int{1, 2}
		if arch == "lstm" { // with every optional part
			cfg.InputLayer, cfg.HeadHidden, cfg.Mask, cfg.MaskHidden = 3, 2, true, 2
			cfg.IDMap = make([]int32, len(fuzzVocab))
			cfg.Groups = make([]int32, len(fuzzVocab))
			for i := range cfg.IDMap {
				cfg.IDMap[i] = int32(i) / 2
				cfg.Groups[i] = int32(i % 3)
			}
			cfg.NumGroups = 3
		}
		m, err := New(Meta{Net: cfg, Tokenizer: "flat", MaxLen: 6, Classes: classes}, vocab, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	wp, err := text.NewWordPiece(fuzzVocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	cfg.EmbedDim = 4
	cfg.Transformer.Layers, cfg.Transformer.Heads, cfg.Transformer.Intermediate, cfg.Transformer.MaxPositions = 1, 2, 3, 8
	opts := wp.Options()
	m, err := NewTransformer(Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 8, Classes: classes, Pieces: &opts,
		Sentence: &SentenceSpec{Pool: "mean", Normalize: true}}, wp, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	models = append(models, m)
	root := t.TempDir()
	for i, m := range models {
		dir := filepath.Join(root, m.Net.Cfg.Arch+strings.Repeat("x", i))
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		c, err := os.ReadFile(filepath.Join(dir, checkpoint.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(dir, checkpoint.WeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		configs, weights = append(configs, c), append(weights, w)
	}
	return configs, weights
}

// editConfig returns config.json with its config's "net" object changed
// by edit.
func editConfig(t testing.TB, config []byte, edit func(net map[string]any)) []byte {
	var cf map[string]any
	if err := json.Unmarshal(config, &cf); err != nil {
		t.Fatal(err)
	}
	edit(cf["config"].(map[string]any)["net"].(map[string]any))
	out, err := json.Marshal(cf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hexDigest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// patchDigests sets config.json's weights, vocabulary and config digests
// to those of the files written with it (as checkpoint.Save computes
// them), so that fuzzed files get past the checksums to the checks behind
// them. A config.json that is not a JSON object is returned as it is.
func patchDigests(config, weights, vocab []byte) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(config, &obj) != nil || obj == nil {
		return config
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	obj["weights_sha256"] = str(hexDigest(weights))
	obj["vocab_sha256"] = str(hexDigest(vocab))
	if c, ok := obj["config"]; ok {
		var buf bytes.Buffer
		if json.Compact(&buf, c) == nil {
			obj["config_sha256"] = str(hexDigest(buf.Bytes()))
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return config
	}
	return out
}

// writeModelDir writes a model directory of the given config.json (digests
// patched), weights and fuzzVocab.
func writeModelDir(t *testing.T, config, weights []byte) string {
	dir := t.TempDir()
	vocab, err := json.Marshal(fuzzVocab)
	if err != nil {
		t.Fatal(err)
	}
	vocab = append(vocab, '\n')
	for name, b := range map[string][]byte{
		checkpoint.ConfigFile:  patchDigests(config, weights, vocab),
		checkpoint.WeightsFile: weights,
		checkpoint.VocabFile:   vocab,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// FuzzLoad: Load of a model directory whose config.json and weights are
// fuzzed together (the digests patched to match, so the sizes, shapes and
// allocations behind them are reached) returns a model or an error, never
// panics or allocates beyond what the files justify. A loaded model holds
// exactly the file's weights and classifies texts into finite
// probabilities.
func FuzzLoad(f *testing.F) {
	configs, weights := fuzzModels(f)
	for i := range configs {
		f.Add(configs[i], weights[i])
	}
	c, w := configs[0], weights[0]
	lstm, lstmW := configs[2], weights[2]
	f.Add(editConfig(f, c, func(net map[string]any) { net["embed_dim"] = 1e9 }), w)
	f.Add(editConfig(f, c, func(net map[string]any) { net["num_classes"] = -2 }), w)
	f.Add(editConfig(f, lstm, func(net map[string]any) { net["embed_dim"], net["mask_hidden"] = 1e9, -1e12 }), lstmW)
	f.Add(editConfig(f, lstm, func(net map[string]any) { net["mask_hidden"] = 0 }), lstmW)
	f.Add(editConfig(f, lstm, func(net map[string]any) { net["id_map"].([]any)[3] = 99 }), lstmW)
	f.Add(editConfig(f, lstm, func(net map[string]any) { net["groups"].([]any)[3] = 3 }), lstmW)
	f.Add(bytes.Replace(c, []byte(`"format_version": 1`), []byte(`"format_version": 2`), 1), w)
	f.Add(bytes.Replace(c, []byte(`"classes": [`), []byte(`"classes": ["x", `), 1), w)
	f.Add(c, w[:len(w)/2])
	f.Add(c, weights[1])
	f.Add([]byte(`{"format": "textarmor-model", "format_version": 1, "config": null}`), w)
	f.Add([]byte("null"), []byte{})
	f.Fuzz(func(t *testing.T, config, weights []byte) {
		if len(config) > 64<<10 || len(weights) > 256<<10 {
			return // far beyond the seeds; keeps each run fast
		}
		dir := writeModelDir(t, config, weights)
		m, err := Load(dir)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("error with an empty message: %#v", err)
			}
			return
		}
		file, _, err := checkpoint.ReadSafetensors(filepath.Join(dir, checkpoint.WeightsFile))
		if err != nil {
			t.Fatalf("the model loaded, its weights file does not: %v", err)
		}
		held := m.Net.Tensors()
		if len(held) != len(file) {
			t.Fatalf("the network has %d tensors, the file %d", len(held), len(file))
		}
		for name, x := range file {
			y := held[name]
			if y == nil || len(y.Data) != len(x.Data) {
				t.Fatalf("tensor %q: not in the network, or another size", name)
			}
			for i := range x.Data {
				if math.Float32bits(x.Data[i]) != math.Float32bits(y.Data[i]) {
					t.Fatalf("tensor %q differs at %d: file %v, network %v", name, i, x.Data[i], y.Data[i])
				}
			}
		}
		for _, p := range m.PredictTexts([]string{"a good film", "", "bad bad bad bad bad bad bad bad bad films"}) {
			sum := 0.0
			for _, v := range p.Probs {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("probability %v", v)
				}
				sum += float64(v)
			}
			if len(p.Probs) < 2 || math.Abs(sum-1) > 1e-3 {
				t.Fatalf("probabilities %v", p.Probs)
			}
		}
	})
}

// TestLoadSizesAsBuilt holds FuzzLoad's seed crashers. A word mask of
// negative width counted negatively in the size check while the network
// built the default 400: an embed_dim of 10^7 (120 million weights, 480
// MB, for a file of a few hundred) got through and was allocated and
// filled before a shape check failed (69 s and 16 GB); with 10^9 memory
// ran out. An id map entry outside the vocabulary loaded, and every text
// with that word panicked ("ag.Lookup: id 99 outside table of 12 rows").
func TestLoadSizesAsBuilt(t *testing.T) {
	configs, weights := fuzzModels(t)
	lstm, w := configs[2], weights[2]
	for _, c := range []struct {
		edit func(net map[string]any)
		want string
	}{
		{func(net map[string]any) { net["embed_dim"], net["mask_hidden"] = 1e7, -1e12 }, "config.json's sizes need"},
		{func(net map[string]any) { net["mask_hidden"] = 0 }, "config.json's sizes need"},
		{func(net map[string]any) { net["id_map"].([]any)[8] = 99 }, "id map entry 8 is 99, not a word id (the vocabulary has 12)"},
		{func(net map[string]any) { net["id_map"].([]any)[0] = -1 }, "id map entry 0 is -1"},
	} {
		dir := writeModelDir(t, editConfig(t, lstm, c.edit), w)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("error %v, want one naming %s and containing %q", err, dir, c.want)
		}
	}
}
