package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/textarmor/textarmor/tensor"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// fakeEndpoint serves the remote victim protocol with answer deciding
// each request's reply (nil: the model's probabilities).
func fakeEndpoint(t *testing.T, m *model.Model, answer func(n int, req RemoteRequest, w http.ResponseWriter) bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		var req RemoteRequest
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error": "bad request"}`, http.StatusBadRequest)
			return
		}
		if answer != nil && answer(n, req, w) {
			return
		}
		res := RemoteResponse{Classes: m.Classes, Tokenizer: m.Tok.Name(), UnkText: "[UNK]", Predictions: []RemotePrediction{}}
		for _, p := range m.PredictTexts(req.Texts) {
			res.Predictions = append(res.Predictions, RemotePrediction{Probs: p.Probs})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(res)
	}))
	t.Cleanup(ts.Close)
	return ts, &calls
}

// tinyTextModel is a randomly initialised two-class transformer over the
// generated task's words.
func tinyTextModel(t *testing.T) *model.Model {
	t.Helper()
	lex := synth.DefaultLexicon()
	words := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", "."}
	for _, g := range append(lex.Positive, lex.Negative...) {
		words = append(words, g...)
	}
	words = append(words, lex.Neutral...)
	wp, err := text.NewWordPiece(words, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions = 32, 64
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: []string{"neg", "pos"}, Pieces: &opts},
		wp, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	// A random head barely separates texts: widen it, so that predictions
	// differ from text to text and substitutions flip some.
	ts := m.Net.Tensors()
	for i := range ts["head.weight"].Data {
		ts["head.weight"].Data[i] *= 200
	}
	clear(ts["head.bias"].Data)
	var diff []float64
	for _, e := range synth.Sentiment(60, 0, 9) {
		p := m.PredictTexts([]string{e.Text})[0].Probs
		diff = append(diff, math.Log(float64(p[1]))-math.Log(float64(p[0])))
	}
	slices.Sort(diff)
	ts["head.bias"].Data[1] = -float32(diff[len(diff)/2]) // half of the texts each way
	return m
}

// TestRemoteAttackEqualsLocal: a recipe run against a model behind an
// endpoint gives the results of the same recipe run against the model in
// process (a transformer, which reads candidates as text either way).
func TestRemoteAttackEqualsLocal(t *testing.T) {
	m := tinyTextModel(t)
	ts, _ := fakeEndpoint(t, m, nil)
	rm, err := NewRemoteModel(context.Background(), ts.URL, RemoteOptions{Batch: 7, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rm.Classes(), []string{"neg", "pos"}) || rm.Info().Tokenizer != "whitespace" {
		t.Fatalf("handshake: %+v", rm.Info())
	}
	syn := lexicon.NewNeighbors("synth")
	for w, nb := range synth.DefaultLexicon().Synonyms() {
		syn.Set(w, nb)
	}
	var ex []Example
	for i, e := range synth.Sentiment(12, 0, 5) {
		ex = append(ex, Example{Index: i, Text: e.Text, Label: m.PredictTexts([]string{e.Text})[0].Class})
	}
	for _, name := range []string{"pwws", "ga"} {
		rc, _ := LookupRecipe(name)
		cfg, err := rc.Build(ProtocolFTML, Resources{Synonyms: syn})
		if err != nil {
			t.Fatal(err)
		}
		local, err := RunAll(context.Background(), cfg.Attack, FromModel(m), ex, RunOptions{Seed: 1, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		remote, err := RunAll(context.Background(), cfg.Attack, rm.Target(text.NewOpenVocab(), m.Tok), ex, RunOptions{Seed: 1, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		succ := 0
		for i := range local {
			l, r := local[i], remote[i]
			l.Seconds, r.Seconds = 0, 0
			if fmt.Sprint(l.row()) != fmt.Sprint(r.row()) || l.Check != r.Check {
				t.Errorf("%s example %d:\nlocal  %v %v\nremote %v %v", name, i, l.row(), l.Check, r.row(), r.Check)
			}
			if l.Type == Successful {
				succ++
			}
		}
		if succ == 0 {
			t.Errorf("%s: no success to compare", name)
		}
	}
	if rm.Err() != nil || rm.Sent() == 0 || rm.Retries() != 0 {
		t.Errorf("err %v, sent %d, retries %d", rm.Err(), rm.Sent(), rm.Retries())
	}
}

// TestRemoteBatchingConcurrencyRetries: requests hold at most Batch
// texts, at most Concurrency are in flight, answers come back in order,
// and 503, 429 and timeouts are retried.
func TestRemoteBatchingConcurrencyRetries(t *testing.T) {
	m := tinyTextModel(t)
	var mu sync.Mutex
	inFlight, most, biggest := 0, 0, 0
	ts, calls := fakeEndpoint(t, m, func(n int, req RemoteRequest, w http.ResponseWriter) bool {
		mu.Lock()
		inFlight++
		most, biggest = max(most, inFlight), max(biggest, len(req.Texts))
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		switch n {
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		case 3:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		case 4:
			time.Sleep(300 * time.Millisecond) // past the client's timeout
		}
		return false
	})
	rm, err := NewRemoteModel(context.Background(), ts.URL, RemoteOptions{Batch: 5, Concurrency: 2, Timeout: 150 * time.Millisecond, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]string, 23)
	for i := range in {
		in[i] = strings.Repeat("good ", i+1)
	}
	got, err := rm.Query(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := m.PredictTexts(in)
	for i := range in {
		if d := tensor.MaxAbsDiff(got[i], want[i].Probs); d != 0 && (tensor.BackendName() != "openblas" || d > 2e-7) { // OpenBLAS: last bits vary with the batch's shape
			t.Fatalf("text %d: %v, want %v", i, got[i], want[i].Probs)
		}
	}
	if most > 2 || biggest > 5 || rm.Retries() != 3 || calls.Load() != 1+5+3 {
		t.Errorf("most in flight %d, biggest request %d texts, %d retries, %d calls", most, biggest, rm.Retries(), calls.Load())
	}
}

// TestRemoteErrors: each broken answer is a clear error naming the
// endpoint; a failure stops a run; the budget is kept.
func TestRemoteErrors(t *testing.T) {
	m := tinyTextModel(t)
	cases := []struct {
		name string
		body string
		code int
		want string
	}{
		{"too few predictions", `{"classes": ["neg", "pos"], "predictions": [{"probs": [0.5, 0.5]}]}`, 200, "1 predictions for 2 texts"},
		{"wrong width", `{"classes": ["neg", "pos"], "predictions": [{"probs": [1]}, {"probs": [0.5, 0.5]}]}`, 200, "prediction 0 has 1 probabilities for 2 classes"},
		{"NaN", `{"classes": ["neg", "pos"], "predictions": [{"probs": [NaN, 0.5]}, {"probs": [0.5, 0.5]}]}`, 200, "NaN and Infinity are not JSON numbers"},
		{"null", `{"classes": ["neg", "pos"], "predictions": [{"probs": null}, {"probs": [0.5, 0.5]}]}`, 200, "prediction 0 has 0 probabilities"},
		{"logits", `{"classes": ["neg", "pos"], "predictions": [{"probs": [0.5, 0.5]}, {"probs": [0.9, 0.9]}]}`, 200, "sum to 1.8"},
		{"negative", `{"classes": ["neg", "pos"], "predictions": [{"probs": [1.5, -0.5]}, {"probs": [0.5, 0.5]}]}`, 200, "probability 0 is 1.5"},
		{"classes changed", `{"classes": ["a", "b"], "predictions": [{"probs": [0.5, 0.5]}, {"probs": [0.5, 0.5]}]}`, 200, "classes changed"},
		{"not JSON", `<html>oops</html>`, 200, "not the protocol's JSON"},
		{"client error", `{"error": "text 1 is too long"}`, 413, "413 Request Entity Too Large: text 1 is too long"},
		{"server error", `{"error": "boom"}`, 500, "500 Internal Server Error: boom (after 3 tries)"},
	}
	for _, c := range cases {
		ts, calls := fakeEndpoint(t, m, func(n int, req RemoteRequest, w http.ResponseWriter) bool {
			if len(req.Texts) == 0 {
				return false // the handshake
			}
			w.WriteHeader(c.code)
			io.WriteString(w, c.body)
			return true
		})
		rm, err := NewRemoteModel(context.Background(), ts.URL, RemoteOptions{Retries: 2, Backoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = rm.Query(context.Background(), []string{"good", "bad"})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "remote victim "+ts.URL) {
			t.Errorf("%s: %v; want %q naming the endpoint", c.name, err, c.want)
		}
		if wantCalls := map[bool]int64{true: 4, false: 2}[c.code >= 500]; calls.Load() != wantCalls {
			t.Errorf("%s: %d calls, want %d", c.name, calls.Load(), wantCalls)
		}
	}
	// The handshake needs classes, and the URL must be one.
	ts, _ := fakeEndpoint(t, m, func(n int, req RemoteRequest, w http.ResponseWriter) bool {
		io.WriteString(w, `{"predictions": []}`)
		return true
	})
	if _, err := NewRemoteModel(context.Background(), ts.URL, RemoteOptions{}); err == nil || !strings.Contains(err.Error(), "names 0 classes") {
		t.Errorf("no classes: %v", err)
	}
	if _, err := NewRemoteModel(context.Background(), "localhost:8080/v1/predict", RemoteOptions{}); err == nil || !strings.Contains(err.Error(), "http://") {
		t.Errorf("no scheme: %v", err)
	}
	if _, err := NewRemoteModel(context.Background(), "http://127.0.0.1:1/v1/predict", RemoteOptions{Retries: -1}); err == nil ||
		!strings.Contains(err.Error(), "remote victim http://127.0.0.1:1/v1/predict") {
		t.Errorf("nothing listening: %v", err)
	}

	// A budget of 30 texts: a run stops with the error once it is spent.
	ok, _ := fakeEndpoint(t, m, nil)
	rm, err := NewRemoteModel(context.Background(), ok.URL, RemoteOptions{Budget: 30})
	if err != nil {
		t.Fatal(err)
	}
	syn := lexicon.NewNeighbors("synth")
	for w, nb := range synth.DefaultLexicon().Synonyms() {
		syn.Set(w, nb)
	}
	rc, _ := LookupRecipe("pwws")
	cfg, _ := rc.Build(ProtocolFTML, Resources{Synonyms: syn})
	var ex []Example
	for i, e := range synth.Sentiment(10, 0, 5) {
		ex = append(ex, Example{Index: i, Text: e.Text, Label: e.Label})
	}
	_, err = RunAll(context.Background(), cfg.Attack, rm.Target(text.NewOpenVocab(), m.Tok), ex, RunOptions{Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "budget of 30 texts is spent") || rm.Sent() > 30 {
		t.Errorf("budget: %v, %d sent", err, rm.Sent())
	}
}
