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
