package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/textarmor/textarmor/tensor"

	"github.com/textarmor/textarmor/model"
)

// TestPredictConcurrentRequestsStayApart: many concurrent requests of
// different texts, micro-batched together, each get exactly their own
// texts' predictions (equal to the model's, which do not depend on the
// batch), and the passes did merge requests.
func TestPredictConcurrentRequestsStayApart(t *testing.T) {
	dir := t.TempDir()
	m := tinyTransformer(t, filepath.Join(dir, "tr"), 1)
	cfg := NewConfig()
	cfg.MaxBatch, cfg.MaxWait = 16, 20*time.Millisecond
	s, url := testServer(t, cfg, "tr="+filepath.Join(dir, "tr"))
	all := texts(400, 7)
	want := m.PredictTexts(all)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 5; k++ {
				lo := (g*12 + k*3) % (len(all) - 5)
				n := 1 + (g+k)%5
				var got PredictResponse
				code, raw := post(t, url+"/v1/predict", PredictRequest{Texts: all[lo : lo+n]}, &got)
				if code != http.StatusOK || len(got.Predictions) != n {
					errs <- fmt.Errorf("status %d, %d predictions for %d texts: %s", code, len(got.Predictions), n, raw)
					return
				}
				for i, p := range got.Predictions {
					w := want[lo+i]
					if p.Class != w.Class || !sameProbs(p.Probs, w.Probs) || p.Label != w.Label || p.KnownTokens != w.KnownTokens {
						errs <- fmt.Errorf("text %q: got %+v, want %+v", all[lo+i], p, w)
						return
					}
				}
				if got.Model != "tr" || got.Digest == "" || !slices.Equal(got.Classes, []string{"neg", "pos"}) {
					errs <- fmt.Errorf("answer's header %+v", got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The batch histogram saw passes of more than one request's texts.
	_, body := get(t, url+"/metrics")
	if !strings.Contains(body, `textarmor_batch_texts_count{kind="predict",model="tr"}`) {
		t.Fatalf("metrics lack the batch histogram:\n%s", body)
	}
	e, release, _ := s.acquire("tr")
	release()
	_ = e
	if passes, texts := batchStats(t, body); passes >= texts {
		t.Errorf("%g forward passes for %g texts: no micro-batching", passes, texts)
	}
}

// batchStats reads the predict batch histogram's count (passes) and sum
// (texts) from a metrics page.
func batchStats(t *testing.T, body string) (passes, texts float64) {
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, `textarmor_batch_texts_count{kind="predict"`):
			fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &passes)
		case strings.HasPrefix(line, `textarmor_batch_texts_sum{kind="predict"`):
			fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &texts)
		}
	}
	if passes == 0 {
		t.Fatalf("no predict passes in the metrics:\n%s", body)
	}
	return passes, texts
}

func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBadInput: every malformed request gets a 4xx with a message that
// says what is wrong, and the server keeps answering.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tinyTransformer(t, filepath.Join(dir, "tr"), 1)
	tinyCNN(t, filepath.Join(dir, "cnn"), 2)
	cfg := NewConfig()
	cfg.MaxBody, cfg.MaxTexts, cfg.MaxWords = 2000, 4, 20
	_, url := testServer(t, cfg, "tr="+filepath.Join(dir, "tr"), "cnn="+filepath.Join(dir, "cnn"))
	long := strings.Repeat("good ", 21)
	cases := []struct {
		name, path, ctype string
		body              string
		code              int
		want              string
	}{
		{"malformed JSON", "/v1/predict", "application/json", `{"model": "tr", "texts": [`, 400, "malformed JSON"},
		{"not an object", "/v1/predict", "application/json", `["a"]`, 400, "malformed JSON"},
		{"two values", "/v1/predict", "application/json", `{"model":"tr","texts":[]} {}`, 400, "more than one value"},
		{"unknown field", "/v1/predict", "application/json", `{"model": "tr", "text": ["a"]}`, 400, `unknown field "text"`},
		{"texts missing", "/v1/predict", "application/json", `{"model": "tr"}`, 400, `"texts" is required`},
		{"texts not strings", "/v1/predict", "application/json", `{"model": "tr", "texts": [1]}`, 400, "malformed JSON"},
		{"wrong content type", "/v1/predict", "text/plain", `{"model": "tr", "texts": ["a"]}`, 415, "application/json"},
		{"no content type", "/v1/predict", "", `{"model": "tr", "texts": ["a"]}`, 415, "application/json"},
		{"other charset", "/v1/predict", "application/json; charset=latin1", `{"model": "tr", "texts": ["a"]}`, 415, "UTF-8"},
		{"oversize body", "/v1/predict", "application/json", `{"model": "tr", "texts": ["` + strings.Repeat("a", 3000) + `"]}`, 413, "--max-body"},
		{"too many texts", "/v1/predict", "application/json", `{"model": "tr", "texts": ["a","b","c","d","e"]}`, 413, "--max-texts"},
		{"too many words", "/v1/predict", "application/json", `{"model": "tr", "texts": ["good", "` + long + `"]}`, 413, "text 1 has 21 words"},
		{"unknown model", "/v1/predict", "application/json", `{"model": "nope", "texts": ["a"]}`, 404, `unknown model "nope" (served: cnn, tr)`},
		{"no model named", "/v1/predict", "application/json", `{"texts": ["a"]}`, 400, "several models are served"},
		{"not UTF-8", "/v1/predict", "application/json", "{\"model\": \"tr\", \"texts\": [\"caf\xe9\"]}", 400, "not valid UTF-8 (byte 30)"},
		{"embed a CNN", "/v1/embed", "application/json", `{"model": "cnn", "texts": ["good"]}`, 400, "need a transformer"},
		{"explain method", "/v1/explain", "application/json", `{"model": "cnn", "texts": ["good"], "method": "shap"}`, 400, `method "shap"`},
		{"explain steps", "/v1/explain", "application/json", `{"model": "cnn", "texts": ["good"], "steps": 100000}`, 400, "steps 100000"},
		{"explain class", "/v1/explain", "application/json", `{"model": "cnn", "texts": ["good"], "class": "z"}`, 400, `class "z"`},
		{"attack recipe", "/v1/attack", "application/json", `{"model": "cnn", "text": "good", "recipe": "nope"}`, 400, "pwws"},
		{"attack no recipe", "/v1/attack", "application/json", `{"model": "cnn", "text": "good"}`, 400, `"recipe" is required`},
		{"attack budget", "/v1/attack", "application/json", `{"model": "cnn", "text": "good", "recipe": "pwws", "query_budget": 99999}`, 400, "query_budget 99999"},
		{"attack label", "/v1/attack", "application/json", `{"model": "cnn", "text": "good", "recipe": "pwws", "label": 3}`, 400, "label 3"},
		{"attack protocol", "/v1/attack", "application/json", `{"model": "cnn", "text": "good", "recipe": "pwws", "protocol": "x"}`, 400, `protocol "x"`},
		{"attack resources", "/v1/attack", "application/json", `{"model": "cnn", "text": "good", "recipe": "pwws", "protocol": "ftml"}`, 400, "cannot run on this server"},
		{"unknown path", "/v2/predict", "application/json", `{}`, 404, "no endpoint /v2/predict"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, url+c.path, strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error string }
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != c.code || !strings.Contains(e.Error, c.want) ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s; want %d with %q", c.name, resp.StatusCode, b, c.code, c.want)
		}
	}
	if code, body := get(t, url+"/v1/predict"); code != 405 || !strings.Contains(body, "takes POST") {
		t.Errorf("GET /v1/predict: %d %s", code, body)
	}
	if code, body := get(t, url+"/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("after bad input: /healthz %d %s", code, body)
	}
	var ok PredictResponse
	// The model named in the URL's query, as a remote victim's URL may.
	if code, body := post(t, url+"/v1/predict?model=cnn", `{"texts":["good film"]}`, &ok); code != 200 || len(ok.Predictions) != 1 || len(ok.Predictions[0].Probs) != 3 {
		t.Fatalf("after bad input: %d %s", code, body)
	}
}

// TestQueueBound: a full queue answers 429 at once, a request past its
// deadline 503, and both say why.
func TestQueueBound(t *testing.T) {
	dir := t.TempDir()
	tinyCNN(t, filepath.Join(dir, "cnn"), 2)
	cfg := NewConfig()
	cfg.Queue, cfg.MaxBatch, cfg.Timeout = 3, 1, 300*time.Millisecond
	s, url := testServer(t, cfg, filepath.Join(dir, "cnn"))
	// A model that blocks until released: its worker holds one request,
	// the queue the next three texts.
	gate := make(chan struct{})
	e, release, _ := s.acquire("")
	release()
	old := e.predict
	e.predict = newBatcher(func(ts []string) ([]model.Prediction, error) {
		<-gate
		return e.m.PredictTexts(ts), nil
	}, 1, 0, cfg.Queue, 1)
	t.Cleanup(func() { old.close() })
	codes := make(chan int, 10)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := post(t, url+"/v1/predict", `{"texts":["good"]}`, nil)
			codes <- code
		}()
	}
	time.Sleep(100 * time.Millisecond) // the four are in: one taken, three queued
	code, body := post(t, url+"/v1/predict", `{"texts":["bad"]}`, nil)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "queue is full") {
		t.Errorf("past the queue bound: %d %s", code, body)
	}
	wg.Wait() // the deadline passes with the model still blocked
	close(codes)
	for c := range codes {
		if c != http.StatusServiceUnavailable {
			t.Errorf("a request past its deadline got %d, want 503", c)
		}
	}
	close(gate)
	code, body = post(t, url+"/v1/predict", `{"texts":["good"]}`, nil)
	if code != 200 {
		t.Errorf("after the jam: %d %s", code, body)
	}
	_, m := get(t, url+"/metrics")
	for _, w := range []string{`textarmor_rejected_total{model="cnn",reason="queue_full"} 1`, `textarmor_rejected_total{model="cnn",reason="deadline"} 4`,
		`textarmor_requests_total{code="429",endpoint="/v1/predict"} 1`} {
		if !strings.Contains(m, w) {
			t.Errorf("metrics lack %s", w)
		}
	}
}

// TestReloadNeverMixes: while requests run, the model directory is
// replaced and reloaded; every answer is wholly the old model's or wholly
// the new one's (its digest says which), a failed reload keeps serving.
func TestReloadNeverMixes(t *testing.T) {
	dir := t.TempDir()
	mdir := filepath.Join(dir, "m")
	a := tinyCNN(t, mdir, 1)
	b := tinyCNN(t, filepath.Join(dir, "b"), 2)
	da, _ := a.WeightsDigest()
	db, _ := b.WeightsDigest()
	s, url := testServer(t, NewConfig(), "m="+mdir)
	in := texts(6, 3)
	want := map[string][]model.Prediction{da: a.PredictTexts(in), db: b.PredictTexts(in)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	seen := make(chan string, 10000)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var got PredictResponse
				if code, body := post(t, url+"/v1/predict", PredictRequest{Texts: in}, &got); code != 200 {
					t.Errorf("during reload: %d %s", code, body)
					return
				}
				w, ok := want[got.Digest]
				if !ok {
					t.Errorf("unknown digest %s", got.Digest)
					return
				}
				for i := range w {
					if !slices.Equal(w[i].Probs, got.Predictions[i].Probs) {
						t.Errorf("digest %s with another model's prediction", got.Digest[:8])
						return
					}
				}
				seen <- got.Digest
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := b.Save(mdir); err != nil { // atomic, as the CLI writes models
		t.Fatal(err)
	}
	var models struct{ Models []ModelInfo }
	if code, body := post(t, url+"/v1/reload", `{}`, &models); code != 200 || models.Models[0].Digest != db {
		t.Fatalf("reload: %d %s", code, body)
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(seen)
	got := map[string]int{}
	for d := range seen {
		got[d]++
	}
	if got[da] == 0 || got[db] == 0 {
		t.Errorf("answers by model: %v; want both", got)
	}
	// A broken directory: the reload fails, the model loaded before stays.
	if err := os.WriteFile(filepath.Join(mdir, "model.safetensors"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := post(t, url+"/v1/reload", `{}`, nil); code != 500 || !strings.Contains(body, "still served") {
		t.Errorf("broken reload: %d %s", code, body)
	}
	var p PredictResponse
	if code, _ := post(t, url+"/v1/predict", PredictRequest{Texts: in}, &p); code != 200 || p.Digest != db {
		t.Errorf("after a failed reload: %d, digest %s", code, p.Digest)
	}
	_, m := get(t, url+"/metrics")
	if !strings.Contains(m, `textarmor_reloads_total{result="failed"} 1`) || !strings.Contains(m, `textarmor_reloads_total{result="ok"} 1`) {
		t.Errorf("reload metrics:\n%s", m)
	}
	_ = s
}

// TestServeShutdownFinishesInFlight: Serve on a real socket; SIGHUP
// reloads; a cancelled context drains (healthz 503), lets the request in
// flight finish with 200, and returns nil.
func TestServeShutdownFinishesInFlight(t *testing.T) {
	dir := t.TempDir()
	tinyCNN(t, filepath.Join(dir, "cnn"), 2)
	cfg := NewConfig()
	cfg.Models = []string{filepath.Join(dir, "cnn")}
	var log strings.Builder
	var logMu sync.Mutex
	cfg.Log = writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) })
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	e, release, _ := s.acquire("")
	release()
	old := e.predict
	e.predict = newBatcher(func(ts []string) ([]model.Prediction, error) {
		entered <- struct{}{}
		<-gate
		return e.m.PredictTexts(ts), nil
	}, 8, 0, 16, 1)
	old.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	waitFor(t, func() bool { c, _ := getNoFail(url + "/healthz"); return c == 200 })

	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, m := getNoFail(url + "/metrics")
		return strings.Contains(m, `textarmor_reloads_total{result="ok"} 1`)
	})

	// The reload replaced the blocking batcher: block the new one.
	e, release, _ = s.acquire("")
	release()
	e.predict.close()
	e.predict = newBatcher(func(ts []string) ([]model.Prediction, error) {
		entered <- struct{}{}
		<-gate
		return e.m.PredictTexts(ts), nil
	}, 8, 0, 16, 1)
	res := make(chan int, 1)
	go func() { c, _ := post(t, url+"/v1/predict", `{"texts":["good"]}`, nil); res <- c }()
	<-entered
	cancel()
	waitFor(t, func() bool { return s.draining.Load() })
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	if c := <-res; c != 200 {
		t.Errorf("the request in flight got %d", c)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if c, _ := getNoFail(url + "/healthz"); c != 0 {
		t.Errorf("after shutdown /healthz answered %d", c)
	}
	logMu.Lock()
	defer logMu.Unlock()
	for _, w := range []string{"serving cnn on http://127.0.0.1:", "SIGHUP: reloading", "reloaded cnn", "shutting down", "stopped"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.String())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func getNoFail(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("timed out")
}

// TestEmbedExplainAttack: the other endpoints answer what the packages
// compute.
func TestEmbedExplainAttack(t *testing.T) {
	dir := t.TempDir()
	m := tinyTransformer(t, filepath.Join(dir, "tr"), 1)
	syn := filepath.Join(dir, "syn.json")
	if err := os.WriteFile(syn, []byte(`{"good": ["fine", "decent", "nice"], "film": ["movie"], "dull": ["boring", "tedious"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig()
	cfg.Attack.Synonyms = syn
	_, url := testServer(t, cfg, filepath.Join(dir, "tr"))
	in := []string{"a good film", "dull"}
	var emb EmbedResponse
	if code, body := post(t, url+"/v1/embed", PredictRequest{Texts: in}, &emb); code != 200 {
		t.Fatalf("embed: %d %s", code, body)
	}
	want, _ := m.Embed(in)
	if emb.Dim != 16 || len(emb.Embeddings) != 2 || !slices.Equal(emb.Embeddings[0], want[0]) || !slices.Equal(emb.Embeddings[1], want[1]) {
		t.Errorf("embed: %+v", emb)
	}
	var ex struct {
		Method       string
		Explanations []Explanation
	}
	if code, body := post(t, url+"/v1/explain", ExplainRequest{Texts: in, Steps: 8}, &ex); code != 200 {
		t.Fatalf("explain: %d %s", code, body)
	}
	if ex.Method != "ig" || len(ex.Explanations) != 2 || len(ex.Explanations[0].Scores) != 3 || !slices.Equal(ex.Explanations[0].Tokens, []string{"a", "good", "film"}) {
		t.Errorf("explain: %+v", ex)
	}
	var at AttackResponse
	if code, body := post(t, url+"/v1/attack", AttackRequest{Text: "a good film , dull", Recipe: "pwws", Protocol: "ftml", QueryBudget: 50}, &at); code != 200 {
		t.Fatalf("attack: %d %s", code, body)
	}
	if at.ResultType == "" || at.QueryBudget != 50 || at.NumQueries > 50 || at.NumWords != 5 || at.OriginalText != "a good film , dull" {
		t.Errorf("attack: %+v", at)
	}
	if at.ResultType == "Successful" && (at.PerturbedOutput == at.OriginalOutput || m.PredictTexts([]string{at.PerturbedText})[0].Class != at.PerturbedOutput) {
		t.Errorf("a success that does not fool the model: %+v", at)
	}
	var list struct{ Models []ModelInfo }
	if code, _ := get(t, url+"/v1/models"); code != 200 {
		t.Fatal(code)
	}
	_ = list
}

// TestConfigCheck: numeric settings are refused naming their flag, model
// names must be unique.
func TestConfigCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.MaxBatch = 0 }, "--max-batch 0 must be"},
		{func(c *Config) { c.MaxWait = -time.Second }, "--max-wait -1s must be"},
		{func(c *Config) { c.Workers = 0 }, "--workers 0 must be"},
		{func(c *Config) { c.Queue = 0 }, "--queue 0 must be"},
		{func(c *Config) { c.MaxBody = 1 }, "--max-body 1 must be"},
		{func(c *Config) { c.MaxTexts = 0 }, "--max-texts 0 must be"},
		{func(c *Config) { c.MaxWords = 0 }, "--max-words 0 must be"},
		{func(c *Config) { c.Timeout = 0 }, "--timeout 0s must be"},
		{func(c *Config) { c.MaxQueries = 0 }, "--max-queries 0 must be"},
		{func(c *Config) { c.Models = nil }, "--model is required"},
		{func(c *Config) { c.Models = []string{"a/m", "b/m"} }, `the name "m" is taken by a/m`},
		{func(c *Config) { c.Models = []string{"x y=dir"} }, `the name "x y" must be`},
	} {
		cfg := NewConfig()
		cfg.Models = []string{"m"}
		c.edit(&cfg)
		err := cfg.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	cfg := NewConfig()
	cfg.Models = []string{filepath.Join(t.TempDir(), "missing")}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "model missing") {
		t.Errorf("a missing model: %v", err)
	}
}

// TestBatcherAbandoned: a request that gives up while queued is skipped
// and leaves the queue's count; close answers what is still queued.
func TestBatcherAbandoned(t *testing.T) {
	gate := make(chan struct{})
	var ran [][]string
	var mu sync.Mutex
	b := newBatcher(func(ts []string) ([]int, error) {
		<-gate
		mu.Lock()
		ran = append(ran, ts)
		mu.Unlock()
		out := make([]int, len(ts))
		for i, s := range ts {
			out[i] = len(s)
		}
		return out, nil
	}, 4, 0, 8, 1)
	first := make(chan []int, 1)
	go func() { r, _ := b.submit(context.Background(), []string{"x"}); first <- r }()
	time.Sleep(20 * time.Millisecond) // taken, blocked in the pass
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := b.submit(ctx, []string{"abandoned"}); gone <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned: %v", err)
	}
	if n := b.queued.Load(); n != 0 {
		t.Errorf("%d texts counted after the request left", n)
	}
	later := make(chan []int, 1)
	go func() { r, _ := b.submit(context.Background(), []string{"ab", "abc"}); later <- r }()
	time.Sleep(20 * time.Millisecond)
	close(gate)
	if r := <-first; !slices.Equal(r, []int{1}) {
		t.Errorf("first: %v", r)
	}
	if r := <-later; !slices.Equal(r, []int{2, 3}) {
		t.Errorf("later: %v", r)
	}
	b.close()
	if _, err := b.submit(context.Background(), []string{"x"}); !errors.Is(err, errStopped) {
		t.Errorf("after close: %v", err)
	}
	for _, r := range ran {
		if slices.Contains(r, "abandoned") {
			t.Errorf("the abandoned request's text was run: %v", ran)
		}
	}
}

// sameProbs compares a served answer with the model's own: bit for bit on
// the pure-Go backends (gonum, simd), whose products do not depend on the
// batch; within
// 2e-7 on OpenBLAS, whose kernels (and so the last bits) change with the
// batch's shape. Texts of this test differ by more than that.
func sameProbs(a, b []float32) bool {
	if tensor.BackendName() != "openblas" {
		return slices.Equal(a, b)
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 2e-7 || d < -2e-7 {
			return false
		}
	}
	return true
}
