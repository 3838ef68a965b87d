package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// lexWords are the generated task's words: what the fixtures' texts and
// vocabularies are made of.
func lexWords() []string {
	lex := synth.DefaultLexicon()
	var w []string
	for _, g := range append(lex.Positive, lex.Negative...) {
		w = append(w, g...)
	}
	return append(w, lex.Neutral...)
}

// tinyTransformer saves a randomly initialised two-class transformer
// (word pieces over the lexicon) into dir and returns it as loaded.
func tinyTransformer(t testing.TB, dir string, seed int64) *model.Model {
	t.Helper()
	wp, err := text.NewWordPiece(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", "."}, lexWords()...), text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 32, 64, "pooler", true
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: []string{"neg", "pos"}, Pieces: &opts},
		wp, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return saveLoad(t, m, dir)
}

// tinyCNN saves a randomly initialised three-class CNN over the lexicon.
func tinyCNN(t testing.TB, dir string, seed int64) *model.Model {
	t.Helper()
	vocab, err := text.NewVocab(append([]string{"<pad>", "<unk>"}, lexWords()...))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters, cfg.Widths = 8, 4, []int{2, 3}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "flat", MaxLen: 40, Classes: []string{"a", "b", "c"}}, vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return saveLoad(t, m, dir)
}

// spread widens a random classifier's head and centres it on generated
// texts, so that its predictions differ from text to text (half each way,
// logits spread by about ±4) and substitutions flip some.
func spread(m *model.Model) {
	ts := m.Net.Tensors()
	clear(ts["head.bias"].Data)
	var diff []float64
	for _, e := range synth.Sentiment(60, 0, 9) {
		p := m.PredictTexts([]string{e.Text})[0].Probs
		diff = append(diff, math.Log(float64(p[1]))-math.Log(float64(p[0])))
	}
	slices.Sort(diff)
	mid, width := diff[len(diff)/2], diff[len(diff)*9/10]-diff[len(diff)/10]
	k := 8 / max(width, 1e-6)
	for i := range ts["head.weight"].Data {
		ts["head.weight"].Data[i] *= float32(k)
	}
	ts["head.bias"].Data[1] = -float32(k * mid)
}

func saveLoad(t testing.TB, m *model.Model, dir string) *model.Model {
	t.Helper()
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// texts are n generated texts of 1 to 12 lexicon words.
func texts(n int, seed int64) []string {
	w := lexWords()
	rng := rand.New(rand.NewSource(seed))
	out := make([]string, n)
	for i := range out {
		k := 1 + rng.Intn(12)
		var b []string
		for range k {
			b = append(b, w[rng.Intn(len(w))])
		}
		out[i] = strings.Join(b, " ")
	}
	return out
}

// testServer serves the given models ("NAME=DIR") with cfg's other
// settings and returns it with its base URL.
func testServer(t testing.TB, cfg Config, models ...string) (*Server, string) {
	t.Helper()
	cfg.Models = models
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts.URL
}

// post sends body as JSON and decodes the answer into out (when not
// nil), returning the status and the raw answer.
func post(t testing.TB, url string, body any, out any) (int, string) {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(body)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s: %v: %s", url, err, got)
		}
	}
	return resp.StatusCode, string(got)
}

func mkdir(t testing.TB, parts ...string) string {
	t.Helper()
	d := filepath.Join(parts...)
	if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
