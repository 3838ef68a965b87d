package model

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/realdata"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/senteval"
)

// miniLM returns the shared all-MiniLM-L6-v2 folder, or skips.
func miniLM(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(realdata.Dir(t), "models", "all-MiniLM-L6-v2")
	if _, err := os.Stat(filepath.Join(dir, "reference-outputs.json")); err != nil {
		t.Skipf("shared checkpoint missing: %v", err)
	}
	return dir
}

type hiddenReference struct {
	Text              string      `json:"text"`
	InputIDs          []int32     `json:"input_ids"`
	LastHiddenState   [][]float64 `json:"last_hidden_state"`
	PoolerOutput      []float64   `json:"pooler_output"`
	SentenceEmbedding []float64   `json:"sentence_embedding"`
}

func maxAbsDiff(got []float32, want []float64) float64 {
	d := math.Inf(1)
	if len(got) == len(want) {
		d = 0
		for i, w := range want {
			d = math.Max(d, math.Abs(float64(got[i])-w))
		}
	}
	return d
}

// TestImportMatchesReference: the imported checkpoint gives the upstream
// implementation's ids, last hidden states, pooler outputs and sentence
// embeddings within 1e-4, each sentence alone and all in one padded batch.
func TestImportMatchesReference(t *testing.T) {
	dir := miniLM(t)
	data, err := os.ReadFile(filepath.Join(dir, "reference-outputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		HiddenStates []hiddenReference `json:"hidden_states"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	m, err := ImportHF(dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.EncoderOnly() || m.MaxLen != 256 || m.Sentence == nil || m.Sentence.Pool != "mean" || !m.Sentence.Normalize {
		t.Fatalf("imported as encoder-only %v, max length %d, sentence spec %+v", m.EncoderOnly(), m.MaxLen, m.Sentence)
	}
	tr := m.Net.Enc.(*nn.Transformer)
	var seqs [][]int32
	var texts []string
	for _, r := range ref.HiddenStates {
		ids := m.Encode(r.Text)
		if !slices.Equal(ids, r.InputIDs) {
			t.Fatalf("%q: ids %v, want %v", r.Text, ids, r.InputIDs)
		}
		seqs, texts = append(seqs, ids), append(texts, r.Text)
	}
	check := func(how string, b *nn.Batch, rows []int) {
		tp := ag.NewTape()
		tp.NoGrad = true
		tokens, _ := m.Net.Encode(tp, m.Net.Embed(tp, b), b.Lengths)
		pooled, err := tr.Pool(tp, tokens, b.Lengths, "pooler")
		if err != nil {
			t.Fatal(err)
		}
		h := tr.Hidden
		for j, i := range rows {
			r := ref.HiddenStates[i]
			var want []float64
			for _, row := range r.LastHiddenState {
				want = append(want, row...)
			}
			got := tokens.Data()[j*b.L*h : (j*b.L+len(r.InputIDs))*h]
			if d := maxAbsDiff(got, want); d > 1e-4 {
				t.Errorf("%s, %q: last hidden state off by %g", how, r.Text, d)
			}
			if d := maxAbsDiff(pooled.Data()[j*h:(j+1)*h], r.PoolerOutput); d > 1e-4 {
				t.Errorf("%s, %q: pooler output off by %g", how, r.Text, d)
			}
		}
	}
	for i, s := range seqs {
		check("alone", nn.MakeBatch([][]int32{s}, nil, 1), []int{i})
	}
	all := make([]int, len(seqs))
	for i := range all {
		all[i] = i
	}
	check("batched", nn.MakeBatch(seqs, nil, 1), all)
	emb, err := m.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range ref.HiddenStates {
		if d := maxAbsDiff(emb[i], r.SentenceEmbedding); d > 1e-4 {
			t.Errorf("%q: sentence embedding off by %g", r.Text, d)
		}
	}
}

// TestImportedSTSB: the imported checkpoint's sentence embeddings score
// the published STS-B test Spearman, 82.03 (±0.1).
func TestImportedSTSB(t *testing.T) {
	dir := miniLM(t)
	pairs, err := dataset.LoadSTSB(realdata.Dir(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ImportHF(dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := senteval.STS(m, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 1379 || math.Abs(r.Spearman-82.03) > 0.1 {
		t.Errorf("STS-B test: %d pairs, Spearman %.3f; want 1,379 and 82.03 ± 0.1", r.N, r.Spearman)
	}
}
