package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// TestLoadHFErrors checks that each problem gives an error naming the file
// at fault and saying what is wrong.
func TestLoadHFErrors(t *testing.T) {
	cfg := tinyConfig()
	good := tinyTensors(8, false)
	goodStored := stored(good, true, "F32")
	withConfig := func(f func(m map[string]any)) map[string]any {
		m := configJSON(cfg)
		f(m)
		return m
	}
	edit := func(f func(ts []rawT) []rawT) []rawT { return f(slices.Clone(goodStored)) }
	find := func(ts []rawT, name string) int {
		i := slices.IndexFunc(ts, func(x rawT) bool { return x.name == name })
		if i < 0 {
			panic(name)
		}
		return i
	}
	reshape := func(name string, shape ...int) []rawT {
		return edit(func(ts []rawT) []rawT {
			i := find(ts, name)
			ts[i].shape, ts[i].data = shape, make([]byte, 4*tensor.Numel(shape))
			return ts
		})
	}
	without := func(names ...string) []rawT {
		return edit(func(ts []rawT) []rawT {
			return slices.DeleteFunc(ts, func(x rawT) bool { return slices.Contains(names, x.name) })
		})
	}
	const W, Cfg, Mod, Pool = WeightsFile, ConfigFile, STModulesFile, "1_Pooling/config.json"
	okModules := `[{"path":"","type":"sentence_transformers.models.Transformer"},{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`
	cases := []struct {
		name  string
		cfg   map[string]any
		ts    []rawT
		files map[string]string
		file  string   // the file the error must name
		want  []string // and what it must say
	}{
		{"wrong-shape", nil, reshape("bert.embeddings.word_embeddings.weight", 20, 9), nil,
			W, []string{`"bert.embeddings.word_embeddings.weight" has shape [20 9], want [20 8]`}},
		{"wrong-rank", nil, reshape("bert.encoder.layer.1.attention.self.key.bias", 8, 1), nil,
			W, []string{`"bert.encoder.layer.1.attention.self.key.bias" has shape [8 1], want [8]`}},
		{"missing-tensor", nil, without("bert.encoder.layer.1.output.dense.weight"), nil,
			W, []string{`"bert.encoder.layer.1.output.dense.weight" is missing`}},
		{"incomplete-pooler", nil, without("bert.pooler.dense.bias"), nil,
			W, []string{`"bert.pooler.dense.bias" is missing`}},
		{"pooler-without-weight", nil, without("bert.pooler.dense.weight"), nil,
			W, []string{`"bert.pooler.dense.weight" is missing`}},
		{"incomplete-mlm-head", nil, append(slices.Clone(goodStored), rawT{mlmBias, "F32", []int{20}, make([]byte, 80)}), nil,
			W, []string{`"cls.predictions.transform.dense.weight" is missing; tensor "cls.predictions.transform.dense.bias" is missing`, "and 1 more"}},
		{"non-finite", nil, edit(func(ts []rawT) []rawT {
			i := find(ts, "bert.encoder.layer.0.attention.output.dense.bias")
			d := slices.Clone(ts[i].data)
			binary.LittleEndian.PutUint32(d[8:], math.Float32bits(float32(math.NaN())))
			ts[i].data = d
			return ts
		}), nil, W, []string{`"bert.encoder.layer.0.attention.output.dense.bias" holds NaN at index 2`}},
		{"classifier-wrong-width", nil, reshape("classifier.weight", 3, 7), nil,
			W, []string{`"classifier.weight" has shape [3 7], want [3 8]`}},
		{"kept-I64", nil, edit(func(ts []rawT) []rawT {
			i := find(ts, "bert.embeddings.token_type_embeddings.weight")
			ts[i].dtype, ts[i].data = "I64", make([]byte, 8*16)
			return ts
		}), nil, W, []string{`"bert.embeddings.token_type_embeddings.weight" has dtype I64`}},
		{"mixed-prefix", nil, edit(func(ts []rawT) []rawT {
			i := find(ts, "bert.encoder.layer.0.output.dense.bias")
			ts[i].name = "encoder.layer.0.output.dense.bias"
			return ts
		}), nil, W, []string{`"encoder.layer.0.output.dense.bias" has no "bert." prefix`}},
		{"gamma-and-weight", nil, append(slices.Clone(goodStored), rawT{"bert.embeddings.LayerNorm.gamma", "F32", []int{8}, make([]byte, 32)}), nil,
			W, []string{`"bert.embeddings.LayerNorm.gamma"`, `both "embeddings.LayerNorm.weight"`}},
		{"roberta", withConfig(func(m map[string]any) { m["model_type"] = "roberta" }), nil, nil,
			Cfg, []string{`model_type "roberta" is not supported yet`}},
		{"distilbert", withConfig(func(m map[string]any) { m["model_type"] = "distilbert" }), nil, nil,
			Cfg, []string{`model_type "distilbert" is not supported yet`}},
		{"no-model-type", withConfig(func(m map[string]any) { delete(m, "model_type") }), nil, nil,
			Cfg, []string{"model_type is missing"}},
		{"zero-hidden", withConfig(func(m map[string]any) { m["hidden_size"] = 0 }), nil, nil,
			Cfg, []string{"hidden_size is 0"}},
		{"negative-layers", withConfig(func(m map[string]any) { m["num_hidden_layers"] = -2 }), nil, nil,
			Cfg, []string{"num_hidden_layers is -2"}},
		{"heads-do-not-divide", withConfig(func(m map[string]any) { m["num_attention_heads"] = 3 }), nil, nil,
			Cfg, []string{"hidden_size 8 is not divisible by num_attention_heads 3"}},
		{"activation", withConfig(func(m map[string]any) { m["hidden_act"] = "swish" }), nil, nil,
			Cfg, []string{`hidden_act "swish" is not supported; supported: gelu`}},
		{"relative-positions", withConfig(func(m map[string]any) { m["position_embedding_type"] = "relative_key" }), nil, nil,
			Cfg, []string{`position_embedding_type "relative_key"`}},
		{"pad-id", withConfig(func(m map[string]any) { m["pad_token_id"] = 20 }), nil, nil,
			Cfg, []string{"pad_token_id 20 is outside the vocabulary [0, 20)"}},
		{"layer-norm-eps", withConfig(func(m map[string]any) { m["layer_norm_eps"] = 0 }), nil, nil,
			Cfg, []string{"layer_norm_eps 0 must be positive"}},
		{"dropout", withConfig(func(m map[string]any) { m["hidden_dropout_prob"] = 1.5 }), nil, nil,
			Cfg, []string{"hidden_dropout_prob 1.5 is not a probability"}},
		{"huge-vocab", withConfig(func(m map[string]any) { m["vocab_size"] = 1e12 }), nil, nil,
			Cfg, []string{"vocab_size 1000000000000 is too large"}},
		{"too-many-params", withConfig(func(m map[string]any) { m["vocab_size"], m["hidden_size"] = 1_000_000, 2048 }), nil, nil,
			Cfg, []string{"parameters, more than"}},
		{"too-many-layers", withConfig(func(m map[string]any) { m["num_hidden_layers"] = 100_000_000 }), nil, nil,
			Cfg, []string{"num_hidden_layers 100000000 is too large"}},
		{"size-not-a-number", withConfig(func(m map[string]any) { m["hidden_size"] = "8" }), nil, nil,
			Cfg, []string{"hidden_size"}},
		{"bad-id2label", withConfig(func(m map[string]any) { m["id2label"] = map[string]string{"0": "a", "2": "b"} }), nil, nil,
			Cfg, []string{`id2label key "2"`}},
		{"id2label-vs-classifier", withConfig(func(m map[string]any) { m["id2label"] = map[string]string{"0": "a", "1": "b"} }), nil, nil,
			Cfg, []string{"id2label has 2 labels", `"classifier.weight" has 3 rows`}},
		{"malformed-config", nil, nil, map[string]string{Cfg: `{"model_type": "bert",`}, Cfg, []string{"invalid JSON"}},
		{"malformed-modules", nil, nil, map[string]string{Mod: `[{"path": ""`}, Mod, []string{"invalid JSON"}},
		{"malformed-pooling", nil, nil, map[string]string{Mod: okModules, Pool: `{"pooling_mode_mean_tokens": tru}`}, Pool, []string{"invalid JSON"}},
		{"two-pooling-modes", nil, nil, map[string]string{Mod: okModules,
			Pool: `{"pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": true}`}, Pool, []string{"[mean max]"}},
		{"pooling-width", nil, nil, map[string]string{Mod: okModules,
			Pool: `{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true}`}, Pool, []string{"word_embedding_dimension 384"}},
		{"malformed-st-config", nil, nil, map[string]string{Mod: okModules, Pool: `{"pooling_mode_mean_tokens": true}`,
			STConfigFile: `{"max_seq_length": "long"}`}, STConfigFile, []string{"max_seq_length"}},
		{"malformed-tokenizer-config", nil, nil, map[string]string{HFTokenizerConfigFile: `{`}, HFTokenizerConfigFile, []string{"invalid JSON"}},
		{"vocab-too-long", nil, nil, map[string]string{HFVocabFile: strings.Repeat("x\n", 21)}, HFVocabFile, []string{"21 tokens, more than vocab_size 20"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.cfg == nil && (c.files == nil || c.files[Cfg] == "") {
				c.cfg = configJSON(cfg)
			}
			if c.ts == nil {
				c.ts = goodStored
			}
			dir := hfDir(t, c.cfg, c.ts, c.files)
			_, err := LoadHF(dir)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(strings.ReplaceAll(err.Error(), dir, "DIR"))
			p := filepath.Join(dir, c.file)
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestLoadHFChecksNamesBeforeData: the tensors' names and shapes are
// checked from the header alone, so a wrong-shaped or incomplete model is
// reported as such even when its file is cut short or claims far more data
// than it has; the truncation itself is only reported for a model of the
// right shape.
func TestLoadHFChecksNamesBeforeData(t *testing.T) {
	cfg := configJSON(tinyConfig())
	good := stored(tinyTensors(9, false), false, "F32")
	truncated := func(ts []rawT) string {
		b := rawSafetensors(ts, nil)
		return string(b[:len(b)-len(b)/3])
	}
	wrong := slices.Clone(good)
	i := slices.IndexFunc(wrong, func(x rawT) bool { return x.name == "encoder.layer.0.intermediate.dense.weight" })
	wrong[i].shape, wrong[i].data = []int{12, 9}, make([]byte, 4*12*9)
	missing := slices.DeleteFunc(slices.Clone(good), func(x rawT) bool { return x.name == "embeddings.LayerNorm.bias" })

	// A header claiming a huge tensor (8 TiB) that is not in the file.
	huge := func() string {
		hdr := map[string]any{}
		const n = 1 << 40
		hdr["embeddings.word_embeddings.weight"] = map[string]any{"dtype": "F32", "shape": []int{n, 2}, "data_offsets": []int{0, 8 * n}}
		off := 8 * n
		var data []byte
		for _, x := range good {
			if x.name == "embeddings.word_embeddings.weight" {
				continue
			}
			hdr[x.name] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int{off, off + len(x.data)}}
			off += len(x.data)
			data = append(data, x.data...)
		}
		h, _ := json.Marshal(hdr)
		return string(rawFile(string(h), data))
	}()

	cases := []struct{ name, file, want string }{
		{"truncated-wrong-shape", truncated(wrong), `"encoder.layer.0.intermediate.dense.weight" has shape [12 9], want [12 8]`},
		{"truncated-missing", truncated(missing), `"embeddings.LayerNorm.bias" is missing`},
		{"huge-shape", huge, `"embeddings.word_embeddings.weight" has shape [1099511627776 2], want [20 8]`},
		{"truncated-right-shapes", truncated(good), "truncated: header says"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := hfDir(t, cfg, nil, map[string]string{WeightsFile: c.file})
			_, err := LoadHF(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, WeightsFile)) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, WeightsFile, c.want)
			}
		})
	}
}

func TestLoadHFMissingFiles(t *testing.T) {
	cfg := configJSON(tinyConfig())
	t.Run("no-config", func(t *testing.T) {
		dir := hfDir(t, nil, stored(tinyTensors(1, false), true, "F32"), nil)
		_, err := LoadHF(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ConfigFile)) || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("config-in-st-module", func(t *testing.T) {
		dir := hfDir(t, nil, nil, map[string]string{
			STModulesFile:             `[{"path":"0_BERT","type":"sentence_transformers.models.BERT"}]`,
			"0_BERT/" + ConfigFile:    "{}",
			"0_BERT/" + WeightsFile:   "",
			"1_Pooling/" + ConfigFile: "{}",
		})
		_, err := LoadHF(dir)
		if err == nil || !strings.Contains(err.Error(), "load that directory") || !strings.Contains(err.Error(), filepath.Join(dir, "0_BERT")) {
			t.Fatalf("error %v, want a pointer to 0_BERT", err)
		}
	})
	t.Run("pickle-only", func(t *testing.T) {
		dir := hfDir(t, cfg, nil, map[string]string{"pytorch_model.bin": "PK\x03\x04 pickle"})
		_, err := LoadHF(dir)
		if err == nil {
			t.Fatal("no error")
		}
		for _, w := range []string{dir, "pytorch_model.bin", "never loads", "from transformers import BertForSequenceClassification as M",
			"from_pretrained('" + dir + "')", "safe_serialization=True"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	})
	t.Run("tf-only", func(t *testing.T) {
		dir := hfDir(t, cfg, nil, map[string]string{"tf_model.h5": "x"})
		if _, err := LoadHF(dir); err == nil || !strings.Contains(err.Error(), "from_tf=True") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("other-safetensors", func(t *testing.T) {
		dir := hfDir(t, cfg, nil, map[string]string{"adapter.safetensors": "x"})
		if _, err := LoadHF(dir); err == nil || !strings.Contains(err.Error(), "adapter.safetensors") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("no-weights", func(t *testing.T) {
		dir := hfDir(t, cfg, nil, nil)
		if _, err := LoadHF(dir); err == nil || !strings.Contains(err.Error(), "no weights") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("not-a-dir", func(t *testing.T) {
		p := writeTemp(t, "file", []byte("x"))
		if _, err := LoadHF(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v", err)
		}
	})
}

func TestReadBertConfigDefaults(t *testing.T) {
	p := writeTemp(t, ConfigFile, []byte(`{"model_type":"bert","vocab_size":20,"hidden_size":8,
		"num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":12,"pad_token_id":null}`))
	c, err := ReadBertConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.LayerNormEps != 1e-12 || c.HiddenAct != "gelu" || c.MaxPositionEmbeddings != 512 || c.TypeVocabSize != 2 || c.PadTokenID != 0 {
		t.Errorf("defaults not applied: %+v", c)
	}
	if err := (BertConfig{}).Validate(); err == nil {
		t.Error("the zero BertConfig is valid")
	}
	if err := tinyConfig().Validate(); err != nil {
		t.Errorf("tinyConfig: %v", err)
	}
}

func TestSaveHFRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(h *HFCheckpoint, o *HFSaveOptions)
		want string
	}{
		{"no-pooler", func(h *HFCheckpoint, o *HFSaveOptions) {
			delete(h.Tensors, poolerWeight)
			delete(h.Tensors, poolerBias)
		}, "the caller must supply it"},
		{"prefixed-names", func(h *HFCheckpoint, o *HFSaveOptions) {
			h.Tensors["bert.extra"] = tensor.New(1)
		}, `"bert.extra"`},
		{"buffer", func(h *HFCheckpoint, o *HFSaveOptions) {
			h.Tensors["embeddings.position_ids"] = tensor.New(1, 16)
		}, `"embeddings.position_ids"`},
		{"missing-tensor", func(h *HFCheckpoint, o *HFSaveOptions) {
			delete(h.Tensors, "encoder.layer.0.attention.self.query.bias")
		}, `"encoder.layer.0.attention.self.query.bias" is missing`},
		{"wrong-shape", func(h *HFCheckpoint, o *HFSaveOptions) {
			h.Tensors["embeddings.LayerNorm.bias"] = tensor.New(9)
		}, `"embeddings.LayerNorm.bias" has shape [9], want [8]`},
		{"bad-tensor", func(h *HFCheckpoint, o *HFSaveOptions) {
			h.Tensors["embeddings.LayerNorm.bias"] = &tensor.Tensor{Shape: []int{8}, Data: make([]float32, 3)}
		}, "does not match its data"},
		{"label-count", func(h *HFCheckpoint, o *HFSaveOptions) { h.Labels = []string{"a", "b"} }, "2 labels for a classifier with 3 rows"},
		{"duplicate-label", func(h *HFCheckpoint, o *HFSaveOptions) { h.Labels = []string{"a", "b", "a"} }, `label "a" appears twice`},
		{"bad-config", func(h *HFCheckpoint, o *HFSaveOptions) { h.Config.ModelType = "albert" }, `"albert" is not supported`},
		{"no-vocab", func(h *HFCheckpoint, o *HFSaveOptions) { h.Vocab = nil }, "no vocabulary"},
		{"vocab-too-long", func(h *HFCheckpoint, o *HFSaveOptions) { h.Vocab = append(h.Vocab, "extra") }, "21 vocabulary tokens"},
		{"vocab-newline", func(h *HFCheckpoint, o *HFSaveOptions) { h.Vocab[7] = "a\nb" }, "line break"},
		{"vocab-duplicate", func(h *HFCheckpoint, o *HFSaveOptions) { h.Vocab[7] = "the" }, `"the" appears twice`},
		{"special-not-in-vocab", func(h *HFCheckpoint, o *HFSaveOptions) { o.ClsToken = "<s>" }, `cls_token "<s>" is not in the vocabulary`},
		{"max-length", func(h *HFCheckpoint, o *HFSaveOptions) { h.ModelMaxLength = 17 }, "model_max_length 17"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, o := tinyCheckpoint(), HFSaveOptions{}
			c.edit(h, &o)
			dir := filepath.Join(t.TempDir(), "export")
			err := SaveHF(dir, h, o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if s := siblings(t, dir); len(s) != 0 {
				t.Errorf("left %v behind", s)
			}
		})
	}
}

func TestSaveHFRefusesToReplaceOtherThings(t *testing.T) {
	// A downloaded Hugging Face model is precious: not ours to replace.
	cfg := configJSON(tinyConfig())
	foreign := hfDir(t, cfg, stored(tinyTensors(1, false), true, "F32"), nil)
	other := filepath.Join(t.TempDir(), "notes")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "thesis.tex"), []byte("x"), 0o644)
	file := writeTemp(t, "file", []byte("x"))
	for _, dir := range []string{foreign, other, file} {
		before := siblings(t, dir)
		err := SaveHF(dir, tinyCheckpoint(), HFSaveOptions{})
		if err == nil || !strings.Contains(err.Error(), "refusing") && !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("SaveHF(%s): error %v, want a refusal", dir, err)
		}
		if s := siblings(t, dir); !slices.Equal(s, before) {
			t.Errorf("parent now holds %v, was %v", s, before)
		}
	}
	if _, err := LoadHF(foreign); err != nil {
		t.Errorf("the refused directory no longer loads: %v", err)
	}
	// Asked to, it replaces them.
	for _, dir := range []string{foreign, other} {
		if err := SaveHF(dir, tinyCheckpoint(), HFSaveOptions{Overwrite: true}); err != nil {
			t.Fatalf("Overwrite: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "thesis.tex")); err == nil {
			t.Errorf("%s: old contents left in place", dir)
		}
		if _, err := LoadHF(dir); err != nil {
			t.Error(err)
		}
	}
}

// TestSaveHFFailureKeepsOld fails the final rename and checks the previous
// export is back in place, with nothing left beside it.
func TestSaveHFFailureKeepsOld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	first := tinyCheckpoint()
	if err := SaveHF(dir, first, HFSaveOptions{}); err != nil {
		t.Fatal(err)
	}
	rename = func(from, to string) error {
		if to == dir && strings.Contains(from, ".tmp-") {
			return os.ErrPermission
		}
		return os.Rename(from, to)
	}
	second := tinyCheckpoint()
	second.Tensors = tinyTensors(2, false)
	err := SaveHF(dir, second, HFSaveOptions{})
	rename = os.Rename
	if err == nil {
		t.Fatal("SaveHF succeeded")
	}
	got, err := LoadHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, first.Tensors)
	if s := siblings(t, dir); !slices.Equal(s, []string{"export"}) {
		t.Errorf("parent holds %v", s)
	}
}

func TestReadSafetensorsHeaderAndSelect(t *testing.T) {
	data := rawSafetensors([]rawT{
		{"w", "F32", []int{2}, f32bytes(1.5, -2)},
		positionIDs("position_ids", 3),
		{"h", "F16", []int{1}, encodeAs("F16", []float32{0.25})},
	}, map[string]string{"format": "pt"})
	p := writeTemp(t, "m.safetensors", data)

	hdr, meta, err := ReadSafetensorsHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	if meta["format"] != "pt" || len(hdr) != 3 {
		t.Fatalf("header %v meta %v", hdr, meta)
	}
	if e := hdr["position_ids"]; e.Dtype != "I64" || !slices.Equal(e.Shape, []int{1, 3}) || e.Offsets != [2]uint64{8, 32} {
		t.Errorf("position_ids %+v", e)
	}

	got, _, err := ReadSafetensorsSelect(p, func(n string) bool { return n != "position_ids" })
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got, map[string]*tensor.Tensor{"w": tensor.From([]float32{1.5, -2}, 2), "h": tensor.From([]float32{0.25}, 1)})
	if _, _, err := ReadSafetensors(p); err == nil || !strings.Contains(err.Error(), `"position_ids" has dtype I64`) {
		t.Errorf("reading everything: error %v, want the I64 refused", err)
	}

	// A skipped tensor must still be laid out right.
	gap := rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}}`, make([]byte, 16))
	gp := writeTemp(t, "gap.safetensors", gap)
	if _, _, err := ReadSafetensorsSelect(gp, func(n string) bool { return n == "a" }); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("gap before a skipped tensor: error %v", err)
	}
	if _, _, err := ReadSafetensorsHeader(gp); err == nil {
		t.Error("header read accepted a gap")
	}
	// A dtype outside the format is refused even when skipped: its size,
	// hence its offsets, cannot be checked.
	q := writeTemp(t, "q.safetensors", rawFile(`{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}}`, make([]byte, 1)))
	if _, _, err := ReadSafetensorsSelect(q, func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "Q4") {
		t.Errorf("unknown dtype: error %v", err)
	}

	// The header of a file claiming 1 GiB (sparse on disk) is read without
	// touching the data.
	big := filepath.Join(t.TempDir(), "big.safetensors")
	const n = 1 << 28
	h := rawFile(`{"x":{"dtype":"F32","shape":[`+itoa(n)+`],"data_offsets":[0,`+itoa(4*n)+`]}}`, nil)
	if err := os.WriteFile(big, h, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, int64(len(h))+4*n); err != nil {
		t.Fatal(err)
	}
	bh, _, err := ReadSafetensorsHeader(big)
	if err != nil || !slices.Equal(bh["x"].Shape, []int{n}) {
		t.Errorf("big header %v, %v", bh, err)
	}
}
