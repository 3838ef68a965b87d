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

// refModelDir is the real sentence-transformers/all-MiniLM-L6-v2 checkpoint
// in the shared data folder (/work/shared/... from this package), or a
// skip when it is not there.
func refModelDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "models", "all-MiniLM-L6-v2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		t.Skipf("reference checkpoint not available (%v); it is expected at %s", err, dir)
	}
	return dir
}

// refOutputs is the part of reference-outputs.json (written with
// transformers and sentence-transformers from the same files) used here.
type refOutputs struct {
	Tokenization []struct {
		InputIDs []int    `json:"input_ids"`
		Tokens   []string `json:"tokens"`
	} `json:"tokenization"`
	HiddenStates []struct {
		Text              string      `json:"text"`
		LastHiddenState   [][]float64 `json:"last_hidden_state"`
		PoolerOutput      []float64   `json:"pooler_output"`
		SentenceEmbedding []float64   `json:"sentence_embedding"`
	} `json:"hidden_states"`
}

func TestLoadHFAllMiniLM(t *testing.T) {
	dir := refModelDir(t)
	h, err := LoadHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := h.Config
	if c.NumHiddenLayers != 6 || c.HiddenSize != 384 || c.NumAttentionHeads != 12 || c.IntermediateSize != 1536 ||
		c.VocabSize != 30522 || c.MaxPositionEmbeddings != 512 || c.TypeVocabSize != 2 || c.HiddenAct != "gelu" ||
		c.LayerNormEps != 1e-12 || !slices.Equal(c.Architectures, []string{"BertModel"}) {
		t.Errorf("config %+v", c)
	}
	// The checkpoint is a BertModel with its pooler (sentence-transformers
	// does not use it, but it is stored), no heads.
	if !h.HasPooler || h.HasMLMHead || h.HasClassifier || h.Labels != nil {
		t.Errorf("pooler %v, mlm %v, classifier %v, labels %q; want only the pooler", h.HasPooler, h.HasMLMHead, h.HasClassifier, h.Labels)
	}
	want := BertShapes(c)
	for n, s := range BertPoolerShapes(c) {
		want[n] = s
	}
	if len(h.Tensors) != len(want) || len(want) != 5+6*16+2 {
		t.Errorf("%d tensors, want %d", len(h.Tensors), len(want))
	}
	for n, s := range want {
		if x := h.Tensors[n]; x == nil || !slices.Equal(x.Shape, s) {
			t.Errorf("tensor %q: %v, want shape %v", n, x, s)
		}
	}
	for n, x := range h.Tensors {
		for _, v := range x.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("tensor %q holds %v", n, v)
			}
		}
	}
	// embeddings.position_ids (I64) is skipped silently.
	if len(h.Warnings) != 0 {
		t.Errorf("warnings %q", h.Warnings)
	}
	st := h.SentenceTransformers
	if st == nil || st.Pooling != "mean" || !st.Normalize || st.MaxSeqLength != 256 || st.DoLowerCase || len(st.Modules) != 3 {
		t.Errorf("sentence-transformers info %+v", st)
	}
	if len(h.Vocab) != 30522 || h.Vocab[0] != "[PAD]" || h.Vocab[100] != "[UNK]" || h.Vocab[101] != "[CLS]" ||
		h.Vocab[102] != "[SEP]" || h.Vocab[103] != "[MASK]" || !h.DoLowerCase || h.ModelMaxLength != 512 {
		t.Errorf("vocab of %d (%q...), lower %v, max length %d", len(h.Vocab), h.Vocab[:min(5, len(h.Vocab))], h.DoLowerCase, h.ModelMaxLength)
	}

	// The header as it is: 104 entries, position_ids among them, which is
	// why reading everything fails and the selective read is needed.
	wpath := filepath.Join(dir, WeightsFile)
	hdr, meta, err := ReadSafetensorsHeader(wpath)
	if err != nil {
		t.Fatal(err)
	}
	if pid := hdr["embeddings.position_ids"]; len(hdr) != 104 || pid.Dtype != "I64" || !slices.Equal(pid.Shape, []int{1, 512}) || meta["format"] != "pt" {
		t.Errorf("header: %d entries, position_ids %+v, meta %v", len(hdr), pid, meta)
	}
	if _, _, err := ReadSafetensors(wpath); err == nil || !strings.Contains(err.Error(), "I64") {
		t.Errorf("ReadSafetensors: %v, want the I64 buffer refused", err)
	}

	// One row read straight from the file at the header's offsets.
	raw, err := os.ReadFile(wpath)
	if err != nil {
		t.Fatal(err)
	}
	start := 8 + int(binary.LittleEndian.Uint64(raw))
	we := hdr["embeddings.word_embeddings.weight"]
	const cls, H = 101, 384
	for j := range H {
		off := start + int(we.Offsets[0]) + 4*(cls*H+j)
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[off:]))
		if got := h.Tensors["embeddings.word_embeddings.weight"].Data[cls*H+j]; math.Float32bits(got) != math.Float32bits(v) {
			t.Fatalf("word_embeddings[%d][%d] = %v, file has %v", cls, j, got, v)
		}
	}

	var ref refOutputs
	rb, err := os.ReadFile(filepath.Join(dir, "reference-outputs.json"))
	if err != nil {
		t.Skipf("no reference outputs: %v", err)
	}
	if err := json.Unmarshal(rb, &ref); err != nil {
		t.Fatal(err)
	}
	// vocab.txt lines are the ids transformers' tokenizer gives.
	if len(ref.Tokenization) == 0 {
		t.Fatal("reference-outputs.json has no tokenization")
	}
	for _, ex := range ref.Tokenization {
		for i, id := range ex.InputIDs {
			if h.Vocab[id] != ex.Tokens[i] {
				t.Fatalf("id %d is %q in vocab.txt, %q in the reference", id, h.Vocab[id], ex.Tokens[i])
			}
		}
	}
	// The pooler as transformers applies it, tanh(W·h[CLS] + b) with W
	// [out, in], reproduces its pooler_output from last_hidden_state; and
	// mean pooling then L2 normalisation reproduce sentence-transformers'
	// embedding, confirming what Pooling and Normalize mean.
	if len(ref.HiddenStates) == 0 {
		t.Fatal("reference-outputs.json has no hidden states")
	}
	W, b := h.Tensors[poolerWeight], h.Tensors[poolerBias]
	for _, ex := range ref.HiddenStates {
		hs := ex.LastHiddenState
		var worst float64
		for i := range H {
			s := float64(b.Data[i])
			for j := range H {
				s += float64(W.Data[i*H+j]) * hs[0][j]
			}
			worst = max(worst, math.Abs(math.Tanh(s)-ex.PoolerOutput[i]))
		}
		if worst > 1e-5 {
			t.Errorf("%q: pooler output differs from the reference by %.3g", ex.Text, worst)
		}
		mean := make([]float64, H)
		for _, row := range hs {
			for j := range H {
				mean[j] += row[j] / float64(len(hs))
			}
		}
		var norm float64
		for _, v := range mean {
			norm += v * v
		}
		norm = math.Sqrt(norm)
		worst = 0
		for j := range H {
			worst = max(worst, math.Abs(mean[j]/norm-ex.SentenceEmbedding[j]))
		}
		if worst > 1e-5 {
			t.Errorf("%q: mean+normalize differs from the reference embedding by %.3g", ex.Text, worst)
		}
	}
}

// TestSaveHFAllMiniLM exports the real encoder with a new two-label
// classifier and reads it back unchanged.
func TestSaveHFAllMiniLM(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 90 MB export")
	}
	h, err := LoadHF(refModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	h.Tensors[classifierWeight] = tensor.New(2, 384)
	h.Tensors[classifierBias] = tensor.From([]float32{0.5, -0.5}, 2)
	for i := range h.Tensors[classifierWeight].Data {
		h.Tensors[classifierWeight].Data[i] = float32(i%7) / 100
	}
	h.Labels = []string{"negative", "positive"}
	h.ModelMaxLength = 256
	dir := filepath.Join(t.TempDir(), "minilm-sst2")
	if err := SaveHF(dir, h, HFSaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, got.Tensors, h.Tensors)
	if !got.HasClassifier || !got.HasPooler || !slices.Equal(got.Labels, h.Labels) || !slices.Equal(got.Vocab, h.Vocab) ||
		got.ModelMaxLength != 256 || !got.DoLowerCase || got.SentenceTransformers != nil || len(got.Warnings) != 0 {
		t.Errorf("export read back as classifier %v pooler %v labels %q vocab %d, max %d, lower %v, st %v, warnings %q",
			got.HasClassifier, got.HasPooler, got.Labels, len(got.Vocab), got.ModelMaxLength, got.DoLowerCase, got.SentenceTransformers, got.Warnings)
	}
}
