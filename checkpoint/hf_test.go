package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// tinyConfig is a small valid BERT: V=20, H=8, 2 layers, 2 heads, I=12.
func tinyConfig() BertConfig {
	c := DefaultBertConfig()
	c.Architectures = []string{"BertForSequenceClassification"}
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 20, 8, 2, 2, 12
	c.MaxPositionEmbeddings, c.TypeVocabSize = 16, 2
	return c
}

func tinyVocab() []string {
	v := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for _, w := range strings.Fields("the a film good bad not very ##s ##ly fun dull plot acting great awful") {
		v = append(v, w)
	}
	return v
}

// randomTensors fills shapes with multiples of 1/8 in [-2, 2], which F16
// and BF16 hold exactly, so converted files can be compared bitwise.
func randomTensors(seed uint64, shapes ...map[string][]int) map[string]*tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	out := map[string]*tensor.Tensor{}
	for _, m := range shapes {
		for _, n := range slices.Sorted(maps.Keys(m)) {
			t := tensor.New(m[n]...)
			for i := range t.Data {
				t.Data[i] = float32(r.IntN(33)-16) / 8
			}
			out[n] = t
		}
	}
	return out
}

// tinyTensors are a tiny BERT's encoder, pooler, a 3-label classifier and,
// if mlm, a masked-LM head with a tied decoder.
func tinyTensors(seed uint64, mlm bool) map[string]*tensor.Tensor {
	cfg := tinyConfig()
	groups := []map[string][]int{BertShapes(cfg), BertPoolerShapes(cfg), BertClassifierShapes(cfg, 3)}
	if mlm {
		h := BertMLMHeadShapes(cfg)
		delete(h, mlmDecoderWeight)
		delete(h, mlmDecoderBias)
		groups = append(groups, h)
	}
	return randomTensors(seed, groups...)
}

func tinyCheckpoint() *HFCheckpoint {
	return &HFCheckpoint{
		Config:         tinyConfig(),
		Tensors:        tinyTensors(1, true),
		Labels:         []string{"negative", "neutral", "positive"},
		Vocab:          tinyVocab(),
		DoLowerCase:    true,
		ModelMaxLength: 12,
	}
}

// rawT is a tensor as stored: any name, dtype and bytes.
type rawT struct {
	name, dtype string
	shape       []int
	data        []byte
}

// rawSafetensors lays out ts in order; offsets follow from the data sizes
// unless ends overrides a tensor's end offset (to claim more than is there).
func rawSafetensors(ts []rawT, meta map[string]string) []byte {
	hdr := map[string]any{}
	if meta != nil {
		hdr["__metadata__"] = meta
	}
	var data []byte
	for _, x := range ts {
		begin := len(data)
		data = append(data, x.data...)
		hdr[x.name] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int{begin, len(data)}}
	}
	h, _ := json.Marshal(hdr)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	return rawFile(string(h), data)
}

func f16bits(v float32) uint16 {
	if v == 0 {
		return 0
	}
	b := math.Float32bits(v) // normal and exactly representable, by construction
	return uint16(b>>31)<<15 | uint16((b>>23&0xff)-127+15)<<10 | uint16(b>>13&0x3ff)
}

func encodeAs(dtype string, v []float32) []byte {
	switch dtype {
	case "F32":
		return f32bytes(v...)
	case "F16", "BF16":
		b := make([]byte, 2*len(v))
		for i, x := range v {
			u := uint16(math.Float32bits(x) >> 16)
			if dtype == "F16" {
				u = f16bits(x)
			}
			binary.LittleEndian.PutUint16(b[2*i:], u)
		}
		return b
	}
	panic(dtype)
}

// stored turns canonical tensors into stored ones: "bert."-prefixed base
// names if prefix, in dtype, sorted by name.
func stored(ts map[string]*tensor.Tensor, prefix bool, dtype string) []rawT {
	var out []rawT
	for _, n := range slices.Sorted(maps.Keys(ts)) {
		sn := n
		if prefix && isBaseName(n) {
			sn = bertPrefix + n
		}
		out = append(out, rawT{sn, dtype, ts[n].Shape, encodeAs(dtype, ts[n].Data)})
	}
	return out
}

func positionIDs(name string, n int) rawT {
	b := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(i))
	}
	return rawT{name, "I64", []int{1, n}, b}
}

// configJSON is cfg as a config.json object, for tests to edit.
func configJSON(cfg BertConfig) map[string]any {
	b, _ := json.Marshal(cfg)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["id2label"] = map[string]string{"0": "negative", "1": "neutral", "2": "positive"}
	return m
}

// hfDir writes a checkpoint directory: config.json from cfg (nil: none),
// model.safetensors from ts (nil: none) and extra files by relative path.
func hfDir(t *testing.T, cfg map[string]any, ts []rawT, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		b, _ := json.Marshal(cfg)
		extra = mergeFiles(extra, map[string]string{ConfigFile: string(b)})
	}
	if ts != nil {
		extra = mergeFiles(extra, map[string]string{WeightsFile: string(rawSafetensors(ts, map[string]string{"format": "pt"}))})
	}
	for name, content := range extra {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mergeFiles(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestHFRoundTrip(t *testing.T) {
	want := tinyCheckpoint()
	dir := filepath.Join(t.TempDir(), "export")
	if err := SaveHF(dir, want, HFSaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, want.Tensors)
	if !got.HasPooler || !got.HasClassifier || !got.HasMLMHead || !got.MLMDecoderTied {
		t.Errorf("flags pooler %v classifier %v mlm %v tied %v, want all true",
			got.HasPooler, got.HasClassifier, got.HasMLMHead, got.MLMDecoderTied)
	}
	if !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Vocab, want.Vocab) {
		t.Errorf("labels %q vocab %q, want %q %q", got.Labels, got.Vocab, want.Labels, want.Vocab)
	}
	if !got.DoLowerCase || got.ModelMaxLength != 12 || got.SentenceTransformers != nil || len(got.Warnings) != 0 {
		t.Errorf("lower %v, max length %d, st %v, warnings %q", got.DoLowerCase, got.ModelMaxLength, got.SentenceTransformers, got.Warnings)
	}
	c, w := got.Config, want.Config
	if c.VocabSize != w.VocabSize || c.HiddenSize != w.HiddenSize || c.NumHiddenLayers != w.NumHiddenLayers ||
		c.NumAttentionHeads != w.NumAttentionHeads || c.IntermediateSize != w.IntermediateSize ||
		c.MaxPositionEmbeddings != w.MaxPositionEmbeddings || c.TypeVocabSize != w.TypeVocabSize ||
		c.HiddenAct != w.HiddenAct || c.LayerNormEps != w.LayerNormEps || c.ModelType != "bert" {
		t.Errorf("config %+v, want %+v", c, w)
	}

	// What transformers will read: the files themselves.
	var cfg map[string]any
	readJSON(t, filepath.Join(dir, ConfigFile), &cfg)
	if a, _ := cfg["architectures"].([]any); len(a) != 1 || a[0] != "BertForSequenceClassification" || cfg["model_type"] != "bert" {
		t.Errorf("config.json architectures %v, model_type %v", cfg["architectures"], cfg["model_type"])
	}
	if id2, _ := cfg["id2label"].(map[string]any); len(id2) != 3 || id2["2"] != "positive" {
		t.Errorf("config.json id2label %v", cfg["id2label"])
	}
	if l2, _ := cfg["label2id"].(map[string]any); len(l2) != 3 || l2["neutral"] != 1.0 {
		t.Errorf("config.json label2id %v", cfg["label2id"])
	}
	hdr, meta, err := ReadSafetensorsHeader(filepath.Join(dir, WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	if meta["format"] != "pt" { // transformers refuses a safetensors file without it
		t.Errorf("metadata %v, want format pt", meta)
	}
	for _, n := range []string{"bert.embeddings.word_embeddings.weight", "bert.encoder.layer.1.output.LayerNorm.bias",
		"bert.pooler.dense.weight", "classifier.weight", "cls.predictions.bias", "cls.predictions.transform.dense.weight"} {
		if e, ok := hdr[n]; !ok || e.Dtype != "F32" {
			t.Errorf("model.safetensors: %q is %+v (present %v), want F32", n, e, ok)
		}
	}
	if len(hdr) != len(want.Tensors) {
		t.Errorf("model.safetensors holds %d tensors, want %d", len(hdr), len(want.Tensors))
	}
	var tok, special map[string]any
	readJSON(t, filepath.Join(dir, HFTokenizerConfigFile), &tok)
	readJSON(t, filepath.Join(dir, HFSpecialTokensFile), &special)
	if tok["tokenizer_class"] != "BertTokenizer" || tok["do_lower_case"] != true || tok["model_max_length"] != 12.0 {
		t.Errorf("tokenizer_config.json %v", tok)
	}
	if special["cls_token"] != "[CLS]" || special["pad_token"] != "[PAD]" || len(special) != 5 {
		t.Errorf("special_tokens_map.json %v", special)
	}
	vb, _ := os.ReadFile(filepath.Join(dir, HFVocabFile))
	if string(vb) != strings.Join(tinyVocab(), "\n")+"\n" {
		t.Errorf("vocab.txt %q", vb)
	}

	// A previous export is replaced; nothing is left beside it.
	want.Tensors = tinyTensors(2, false)
	want.Labels = nil
	want.Config.ID2Label = nil
	if err := SaveHF(dir, want, HFSaveOptions{}); err != nil {
		t.Fatalf("replacing a previous export: %v", err)
	}
	got, err = LoadHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, want.Tensors)
	if got.HasMLMHead || !slices.Equal(got.Labels, []string{"LABEL_0", "LABEL_1", "LABEL_2"}) {
		t.Errorf("after replacing: mlm %v labels %q", got.HasMLMHead, got.Labels)
	}
	if s := siblings(t, dir); !slices.Equal(s, []string{"export"}) {
		t.Errorf("parent holds %v", s)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestLoadHFNamesAndDtypes loads one set of weights stored several ways.
func TestLoadHFNamesAndDtypes(t *testing.T) {
	want := tinyTensors(3, true)
	cfg := configJSON(tinyConfig())
	rename := func(ts []rawT, f func(string) string) []rawT {
		out := slices.Clone(ts)
		for i := range out {
			out[i].name = f(out[i].name)
		}
		return out
	}
	gammaBeta := func(n string) string {
		n = strings.Replace(n, "LayerNorm.weight", "LayerNorm.gamma", 1)
		return strings.Replace(n, "LayerNorm.bias", "LayerNorm.beta", 1)
	}
	cases := []struct {
		name string
		ts   []rawT
	}{
		{"bert-prefix", stored(want, true, "F32")},
		{"no-prefix", stored(want, false, "F32")},
		{"gamma-beta", rename(stored(want, true, "F32"), gammaBeta)},
		{"gamma-beta-no-prefix", rename(stored(want, false, "F32"), gammaBeta)},
		{"F16", stored(want, true, "F16")},
		{"BF16", stored(want, false, "BF16")},
		{"position-ids-I64", append(stored(want, true, "F32"), positionIDs("bert.embeddings.position_ids", 16))},
		{"decoder-bias-only", rename(stored(want, true, "F32"), func(n string) string {
			if n == mlmBias {
				return mlmDecoderBias
			}
			return n
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := LoadHF(hfDir(t, cfg, c.ts, nil))
			if err != nil {
				t.Fatal(err)
			}
			sameTensors(t, got.Tensors, want)
			if len(got.Warnings) != 0 {
				t.Errorf("warnings %q", got.Warnings)
			}
			if !got.HasPooler || !got.HasClassifier || !got.HasMLMHead || !got.MLMDecoderTied {
				t.Errorf("flags %v %v %v %v", got.HasPooler, got.HasClassifier, got.HasMLMHead, got.MLMDecoderTied)
			}
		})
	}
}

func TestLoadHFOptionalParts(t *testing.T) {
	cfg := tinyConfig()
	base := randomTensors(4, BertShapes(cfg))
	// An encoder alone: no pooler, no heads, no labels even with id2label.
	got, err := LoadHF(hfDir(t, configJSON(cfg), stored(base, false, "F32"), nil))
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, base)
	if got.HasPooler || got.HasClassifier || got.HasMLMHead || got.Labels != nil || got.Vocab != nil {
		t.Errorf("flags %v %v %v, labels %q, vocab %q", got.HasPooler, got.HasClassifier, got.HasMLMHead, got.Labels, got.Vocab)
	}

	// An untied MLM decoder, an NSP head and a stray tensor: the first is
	// loaded, the others listed as warnings and not loaded.
	full := randomTensors(5, BertShapes(cfg), BertMLMHeadShapes(cfg))
	ts := append(stored(full, true, "F32"),
		rawT{"cls.seq_relationship.weight", "F32", []int{2, 8}, make([]byte, 64)},
		rawT{"bert.encoder.layer.2.output.dense.bias", "F32", []int{8}, make([]byte, 32)},
		rawT{"step", "I64", []int{}, make([]byte, 8)},
	)
	got, err = LoadHF(hfDir(t, configJSON(cfg), ts, nil))
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, full)
	if !got.HasMLMHead || got.MLMDecoderTied {
		t.Errorf("mlm %v tied %v, want an untied head", got.HasMLMHead, got.MLMDecoderTied)
	}
	w := strings.Join(got.Warnings, "\n")
	for _, n := range []string{`"cls.seq_relationship.weight"`, `"bert.encoder.layer.2.output.dense.bias"`, `"step"`} {
		if !strings.Contains(w, n) {
			t.Errorf("warnings %q do not mention %s", got.Warnings, n)
		}
	}
	if len(got.Warnings) != 3 {
		t.Errorf("%d warnings, want 3: %q", len(got.Warnings), got.Warnings)
	}
}

func TestLoadHFSharded(t *testing.T) {
	want := tinyTensors(6, false)
	all := stored(want, true, "F32")
	a, b := all[:len(all)/2], all[len(all)/2:]
	wm := map[string]string{}
	for _, x := range a {
		wm[x.name] = "model-00001-of-00002.safetensors"
	}
	for _, x := range b {
		wm[x.name] = "model-00002-of-00002.safetensors"
	}
	index := func(wm map[string]string) string {
		j, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 1}, "weight_map": wm})
		return string(j)
	}
	files := map[string]string{
		"model-00001-of-00002.safetensors": string(rawSafetensors(a, nil)),
		"model-00002-of-00002.safetensors": string(rawSafetensors(b, nil)),
	}
	cfg := configJSON(tinyConfig())
	got, err := LoadHF(hfDir(t, cfg, nil, mergeFiles(files, map[string]string{HFIndexFile: index(wm)})))
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, want)

	wrong := mergeFiles(wm, map[string]string{a[0].name: "model-00002-of-00002.safetensors"})
	escape := mergeFiles(wm, map[string]string{a[0].name: "../model-00001-of-00002.safetensors"})
	for name, idx := range map[string]string{"wrong-shard": index(wrong), "escaping-path": index(escape), "malformed": `{"weight_map":`} {
		t.Run(name, func(t *testing.T) {
			dir := hfDir(t, cfg, nil, mergeFiles(files, map[string]string{HFIndexFile: idx}))
			_, err := LoadHF(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, HFIndexFile)) {
				t.Fatalf("error %v, want one naming the index", err)
			}
		})
	}
}

func TestLoadHFSentenceTransformers(t *testing.T) {
	cfg := tinyConfig()
	ts := stored(randomTensors(7, BertShapes(cfg), BertPoolerShapes(cfg)), false, "F32")
	modules := `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
		{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
		{"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"},
		{"idx":3,"name":"3","path":"3_Normalize","type":"sentence_transformers.models.Normalize"}]`
	pooling := func(mode string) string {
		m := map[string]any{"word_embedding_dimension": 8}
		for _, k := range []string{"cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens"} {
			m["pooling_mode_"+k] = strings.Contains(mode, k)
		}
		j, _ := json.Marshal(m)
		return string(j)
	}
	files := map[string]string{
		STModulesFile:            modules,
		"1_Pooling/config.json":  pooling("cls_token"),
		STConfigFile:             `{"max_seq_length": 12, "do_lower_case": true}`,
		HFVocabFile:              strings.Join(tinyVocab(), "\r\n") + "\r\n",
		HFTokenizerConfigFile:    `{"do_lower_case": false, "model_max_length": 1000000000000000019884624838656}`,
		"1_Pooling/unrelated.md": "x",
	}
	got, err := LoadHF(hfDir(t, configJSON(cfg), ts, files))
	if err != nil {
		t.Fatal(err)
	}
	st := got.SentenceTransformers
	if st == nil || st.Pooling != "cls" || !st.Normalize || st.MaxSeqLength != 12 || !st.DoLowerCase || len(st.Modules) != 4 {
		t.Fatalf("sentence-transformers info %+v", st)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "Dense") {
		t.Errorf("warnings %q, want one about the Dense module", got.Warnings)
	}
	if !slices.Equal(got.Vocab, tinyVocab()) || got.DoLowerCase || got.ModelMaxLength != 0 {
		t.Errorf("vocab %q lower %v max %d", got.Vocab, got.DoLowerCase, got.ModelMaxLength)
	}
	for mode, want := range map[string]string{"mean_tokens": "mean", "max_tokens": "max", "mean_sqrt_len_tokens": "mean_sqrt_len"} {
		got, err := LoadHF(hfDir(t, configJSON(cfg), ts, mergeFiles(files, map[string]string{"1_Pooling/config.json": pooling(mode)})))
		if err != nil || got.SentenceTransformers.Pooling != want {
			t.Errorf("%s: pooling %+v, %v; want %s", mode, got, err, want)
		}
	}
}

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
