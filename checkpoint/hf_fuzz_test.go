package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// hfFuzzFiles are the files of a Hugging Face directory FuzzLoadHF varies.
var hfFuzzFiles = []string{ConfigFile, WeightsFile, HFVocabFile}

// hfSeedDir writes h with SaveHF and returns its config.json,
// model.safetensors and vocab.txt.
func hfSeedDir(t testing.TB, h *HFCheckpoint) [3][]byte {
	dir := filepath.Join(t.TempDir(), "hf")
	if err := SaveHF(dir, h, HFSaveOptions{}); err != nil {
		t.Fatal(err)
	}
	var out [3][]byte
	for i, name := range hfFuzzFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// FuzzLoadHF: LoadHF of a directory whose config.json, model.safetensors
// and vocab.txt are fuzzed returns a checkpoint or an error (with a
// message), never panics or allocates beyond what the files hold. An
// accepted checkpoint has every tensor BertShapes requires, in that shape;
// with a pooler, SaveHF writes it so that it loads back
// unchanged.
func FuzzLoadHF(f *testing.F) {
	full := hfSeedDir(f, tinyCheckpoint())
	bare := tinyCheckpoint()
	bare.Tensors = randomTensors(2, BertShapes(bare.Config), BertPoolerShapes(bare.Config))
	bare.Labels, bare.Config.ID2Label, bare.Config.Label2ID, bare.Config.Architectures = nil, nil, nil, []string{"BertModel"}
	enc := hfSeedDir(f, bare)
	for _, s := range [][3][]byte{full, enc} {
		f.Add(s[0], s[1], s[2])
	}
	c, w, v := full[0], full[1], full[2]
	edit := func(b []byte, old, new string) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
	f.Add(edit(c, `"hidden_size": 8`, `"hidden_size": 1073741824`), w, v)
	f.Add(edit(c, `"vocab_size": 20`, `"vocab_size": 2`), w, v)
	f.Add(edit(c, `"num_hidden_layers": 2`, `"num_hidden_layers": 1`), w, v)
	f.Add(edit(c, `"model_type": "bert"`, `"model_type": "roberta"`), w, v)
	f.Add(c, enc[1], v)
	f.Add(c, w[:len(w)/2], v)
	f.Add(c, w, []byte("[PAD]\r\n[UNK]\r\n"))
	f.Add(c, w, []byte{})
	f.Add(c, rawSafetensors([]rawT{{"x", "F16", []int{2}, []byte{0, 0x3c, 0, 0x7c}}}, nil), v)
	f.Add([]byte(`{"model_type": "bert"}`), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, config, weights, vocab []byte) {
		if len(config) > 64<<10 || len(weights) > 256<<10 || len(vocab) > 64<<10 {
			return // far beyond the seeds; keeps each run fast
		}
		dir := t.TempDir()
		for i, b := range [][]byte{config, weights, vocab} {
			if err := os.WriteFile(filepath.Join(dir, hfFuzzFiles[i]), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		h, err := LoadHF(dir)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("error with an empty message: %#v", err)
			}
			return
		}
		cfg := h.Config
		for name, shape := range BertShapes(cfg) {
			x := h.Tensors[name]
			if x == nil || !tensor.SameShape(x.Shape, shape) || len(x.Data) != tensor.Numel(shape) {
				t.Fatalf("tensor %q: %v, want shape %v", name, x, shape)
			}
		}
		for name, x := range h.Tensors {
			if !validShape(x) {
				t.Fatalf("tensor %q: shape %v, %d values", name, x.Shape, len(x.Data))
			}
		}
		if len(h.Vocab) > cfg.VocabSize || (h.HasClassifier && len(h.Labels) != h.Tensors[classifierBias].Shape[0]) {
			t.Fatalf("%d tokens for vocab_size %d; %d labels", len(h.Vocab), cfg.VocabSize, len(h.Labels))
		}
		if !h.HasPooler {
			return
		}
		back := filepath.Join(t.TempDir(), "back")
		if err := SaveHF(back, h, HFSaveOptions{}); err != nil {
			return // SaveHF asks more (a vocabulary with the special tokens)
		}
		h2, err := LoadHF(back)
		if err != nil {
			t.Fatalf("re-reading the saved checkpoint: %v", err)
		}
		sameTensors(t, h2.Tensors, h.Tensors)
	})
}
