package serve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
)

// routes is the API: each endpoint with its method, behind the middleware
// that counts, times and recovers.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	type route struct {
		path, method string
		h            func(w http.ResponseWriter, r *http.Request) error
	}
	for _, rt := range []route{
		{"/v1/predict", http.MethodPost, s.predict},
		{"/v1/embed", http.MethodPost, s.embed},
		{"/v1/explain", http.MethodPost, s.explain},
		{"/v1/attack", http.MethodPost, s.attack},
		{"/v1/reload", http.MethodPost, s.reload},
		{"/v1/models", http.MethodGet, s.listModels},
		{"/healthz", http.MethodGet, s.healthz},
	} {
		mux.Handle(rt.path, s.wrap(rt.path, rt.method, rt.h))
	}
	metricsH := s.met.handler()
	mux.Handle("/metrics", s.wrap("/metrics", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		metricsH.ServeHTTP(w, r)
		return nil
	}))
	mux.Handle("/", s.wrap("other", "", func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{http.StatusNotFound, fmt.Sprintf("no endpoint %s (see docs/serving.md: /v1/predict, /v1/explain, /v1/embed, /v1/attack, /v1/models, /v1/reload, /healthz, /metrics)", r.URL.Path)}
	}))
	return mux
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// wrap checks the method, answers an error as JSON, recovers a panic as
// 500, and records the answer's status and time.
func (s *Server) wrap(endpoint, method string, h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.met.inflight.Inc()
		w := &statusWriter{ResponseWriter: rw}
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(s.log, "%s: internal error: %v\n", endpoint, p)
				if w.code == 0 {
					writeError(w, &apiError{http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p)})
				}
			}
			s.met.inflight.Dec()
			s.met.observe(endpoint, w.code, time.Since(start))
		}()
		var err error
		if method != "" && r.Method != method {
			w.Header().Set("Allow", method)
			err = &apiError{http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", endpoint, method, r.Method)}
		} else {
			err = h(w, r)
		}
		if err != nil {
			writeError(w, err)
		}
	})
}

// writeError answers err as {"error": message} with its status (500 when
// it is not an *apiError).
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{http.StatusInternalServerError, err.Error()}
	}
	switch ae.code {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, ae.code, map[string]any{"error": ae.msg, "code": ae.code})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone
}

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func tooLarge(format string, args ...any) error {
	return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf(format, args...)}
}

// decode reads a JSON request body into v: content type application/json,
// at most MaxBody bytes, valid UTF-8, one JSON object with known fields.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if s.draining.Load() {
		return &apiError{http.StatusServiceUnavailable, "the server is shutting down"}
	}
	ct := r.Header.Get("Content-Type")
	if mt, params, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" ||
		(params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		return &apiError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: send application/json (UTF-8)", ct)}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return tooLarge("the request body is over %d bytes (--max-body)", s.cfg.MaxBody)
		}
		return badRequest("reading the request body: %v", err)
	}
	if !utf8.Valid(body) {
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return badRequest("the request body is not valid UTF-8 (byte %d); texts must be UTF-8", i)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON request: %v", err)
	}
	if dec.More() {
		return badRequest("malformed JSON request: more than one value in the body")
	}
	return nil
}

// checkTexts applies the per-request limits to texts read by e's model:
// present, at most MaxTexts of them (max when smaller), each at most
// MaxWords words.
func (s *Server) checkTexts(e *entry, texts []string, max int) error {
	if texts == nil {
		return badRequest(`"texts" is required: a list of strings`)
	}
	limit, flag := s.cfg.MaxTexts, "--max-texts"
	if max > 0 && max < limit {
		limit, flag = max, "this endpoint's limit"
	}
	if len(texts) > limit {
		return tooLarge("%d texts in one request; the limit is %d (%s)", len(texts), limit, flag)
	}
	for i, t := range texts {
		if n := len(e.m.Tok.Tokenize(t)); n > s.cfg.MaxWords {
			return tooLarge("text %d has %d words; the limit is %d (--max-words)", i, n, s.cfg.MaxWords)
		}
	}
	return nil
}

// deadline is the request's context bounded by the configured timeout.
// acquireFor is acquire of the model a request names: in its body, else
// as ?model= in the URL (the remote victim protocol allows either).
func (s *Server) acquireFor(r *http.Request, named string) (*entry, func(), error) {
	return s.acquire(cmp.Or(named, r.URL.Query().Get("model")))
}

func (s *Server) deadline(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.Timeout)
}

// needClasses refuses an encoder without classes.
func needClasses(e *entry, what string) error {
	if len(e.m.Classes) == 0 {
		return badRequest("model %s is a sentence encoder without classes: it has no %s (use /v1/embed)", e.name, what)
	}
	return nil
}

// PredictRequest is /v1/predict's body: the remote victim protocol's
// request.
type PredictRequest = attack.RemoteRequest

// PredictResponse is /v1/predict's answer: attack.RemoteResponse's
// fields, with each prediction's label, class and known tokens.
type PredictResponse struct {
	Model       string             `json:"model"`
	Classes     []string           `json:"classes"`
	Tokenizer   string             `json:"tokenizer"`
	UnkText     string             `json:"unk_text"`
	Digest      string             `json:"digest"`
	Predictions []model.Prediction `json:"predictions"`
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) error {
	var req PredictRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	e, release, err := s.acquireFor(r, req.Model)
	if err != nil {
		return err
	}
	defer release()
	if err := needClasses(e, "predictions"); err != nil {
		return err
	}
	if err := s.checkTexts(e, req.Texts, 0); err != nil {
		return err
	}
	ctx, cancel := s.deadline(r)
	defer cancel()
	preds, err := e.predict.submit(ctx, req.Texts)
	if err != nil {
		return s.batchError(ctx, e.name, err)
	}
	writeJSON(w, http.StatusOK, PredictResponse{Model: e.name, Classes: e.m.Classes, Tokenizer: e.m.Tok.Name(), UnkText: unkText(e.m),
		Digest: e.digest, Predictions: preds})
	return nil
}

// unkText is what a word-importance order writes in place of a word for
// the model: a transformer's unknown piece ("[UNK]"); a word model reads
// any word outside its vocabulary as unknown.
func unkText(m *model.Model) string {
	if m.Pieces != nil {
		return m.Pieces.Token(m.Pieces.UnkID())
	}
	return "[UNK]"
}

// EmbedResponse is /v1/embed's answer.
type EmbedResponse struct {
	Model      string      `json:"model"`
	Dim        int         `json:"dim"`
	Embeddings [][]float32 `json:"embeddings"`
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) error {
	var req PredictRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	e, release, err := s.acquireFor(r, req.Model)
	if err != nil {
		return err
	}
	defer release()
	if e.embed == nil {
		return badRequest("model %s is a %s: sentence embeddings need a transformer", e.name, e.m.Net.Cfg.Arch)
	}
	if err := s.checkTexts(e, req.Texts, 0); err != nil {
		return err
	}
	ctx, cancel := s.deadline(r)
	defer cancel()
	vecs, err := e.embed.submit(ctx, req.Texts)
	if err != nil {
		return s.batchError(ctx, e.name, err)
	}
	writeJSON(w, http.StatusOK, EmbedResponse{Model: e.name, Dim: e.m.Net.Cfg.EmbedDim, Embeddings: vecs})
	return nil
}

// heavySlot waits for one of the Workers slots of explain and attack
// requests; past Workers running and HeavyQueue waiting, a request is
// refused at once (429).
func (s *Server) heavySlot(ctx context.Context, name string) (func(), error) {
	if s.waiting.Add(1) > int64(s.cfg.Workers+s.cfg.HeavyQueue) {
		s.met.heavy.Set(float64(s.waiting.Add(-1)))
		s.met.rejected.WithLabelValues(name, "busy").Inc()
		return nil, &apiError{http.StatusTooManyRequests, fmt.Sprintf("%d explain and attack requests are running or waiting already; retry later",
			s.cfg.Workers+s.cfg.HeavyQueue)}
	}
	s.met.heavy.Inc()
	leave := func() { s.met.heavy.Set(float64(s.waiting.Add(-1))) }
	select {
	case s.heavy <- struct{}{}:
		return func() { <-s.heavy; leave() }, nil
	case <-ctx.Done():
		leave()
		s.met.rejected.WithLabelValues(name, "deadline").Inc()
		return nil, &apiError{http.StatusServiceUnavailable, fmt.Sprintf("no worker free within the request deadline (--timeout %s)", s.cfg.Timeout)}
	}
}

// ExplainRequest is /v1/explain's body.
type ExplainRequest struct {
	Model   string   `json:"model,omitempty"`
	Texts   []string `json:"texts"`
	Method  string   `json:"method,omitempty"` // ig (default) or lime
	Class   string   `json:"class,omitempty"`  // name or index; "" = each text's predicted class
	Steps   int      `json:"steps,omitempty"`
	Samples int      `json:"samples,omitempty"`
	Seed    int64    `json:"seed,omitempty"`
}

// Explanation is one text's attribution.
type Explanation struct {
	Text    string    `json:"text"`
	Skipped string    `json:"skipped,omitempty"`
	Tokens  []string  `json:"tokens"`
	Scores  []float64 `json:"scores"`
	Unknown []bool    `json:"unknown"`
	Class   int       `json:"class"`
	Label   string    `json:"label"`
	Probs   []float32 `json:"probs"`
}

func (s *Server) explain(w http.ResponseWriter, r *http.Request) error {
	var req ExplainRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	c := pipeline.NewExplainTextsConfig()
	if req.Method != "" {
		c.Method = req.Method
	}
	if req.Steps != 0 {
		c.Steps = req.Steps
	}
	if req.Samples != 0 {
		c.Samples = req.Samples
	}
	if req.Seed != 0 {
		c.Seed = req.Seed
	}
	switch {
	case c.Method != "ig" && c.Method != "lime":
		return badRequest("method %q: want ig or lime", c.Method)
	case c.Steps < 1 || c.Steps > s.cfg.MaxSteps:
		return badRequest("steps %d must be in [1, %d]", c.Steps, s.cfg.MaxSteps)
	case c.Samples < 2 || c.Samples > s.cfg.MaxSamples:
		return badRequest("samples %d must be in [2, %d]", c.Samples, s.cfg.MaxSamples)
	}
	e, release, err := s.acquireFor(r, req.Model)
	if err != nil {
		return err
	}
	defer release()
	if err := needClasses(e, "explanations"); err != nil {
		return err
	}
	if err := s.checkTexts(e, req.Texts, s.cfg.MaxExplainTexts); err != nil {
		return err
	}
	cls, err := classOf(e.m, req.Class)
	if err != nil {
		return err
	}
	ctx, cancel := s.deadline(r)
	defer cancel()
	done, err := s.heavySlot(ctx, e.name)
	if err != nil {
		return err
	}
	defer done()
	out := make([]Explanation, 0, len(req.Texts))
	for _, t := range req.Texts {
		if ctx.Err() != nil {
			return s.batchError(ctx, e.name, ctx.Err())
		}
		x, err := pipeline.ExplainText(e.m, t, cls, c)
		if err != nil {
			return err
		}
		out = append(out, Explanation{Text: x.Text, Skipped: x.Skipped, Tokens: x.Tokens, Scores: finite(x.Scores), Unknown: x.Unknown,
			Class: x.Class, Label: x.Label, Probs: x.Probs})
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": e.name, "method": c.Method, "explanations": out})
	return nil
}

// finite replaces what JSON cannot carry (NaN, ±Inf) by 0.
func finite(v []float64) []float64 {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			v[i] = 0
		}
	}
	return v
}

// classOf reads a class by name or index; "" is -1 (the predicted one).
func classOf(m *model.Model, c string) (int, error) {
	if c == "" {
		return -1, nil
	}
	if i := slices.Index(m.Classes, c); i >= 0 {
		return i, nil
	}
	if i, err := strconv.Atoi(c); err == nil && i >= 0 && i < len(m.Classes) {
		return i, nil
	}
	return 0, badRequest("class %q: the model's classes are %s (or 0..%d)", c, strings.Join(m.Classes, ", "), len(m.Classes)-1)
}

// AttackRequest is /v1/attack's body: one text attacked with a recipe.
type AttackRequest struct {
	Model    string `json:"model,omitempty"`
	Text     string `json:"text"`
	Label    *int   `json:"label,omitempty"` // ground truth; absent = the predicted class
	Recipe   string `json:"recipe"`
	Protocol string `json:"protocol,omitempty"` // "", ftml or flat
	// QueryBudget is the model queries allowed (0 = the server's cap,
	// --max-queries; more is refused).
	QueryBudget int   `json:"query_budget,omitempty"`
	Seed        int64 `json:"seed,omitempty"`
}

// AttackResponse is /v1/attack's answer: the result in the CSV's terms.
type AttackResponse struct {
	Model           string  `json:"model"`
	Recipe          string  `json:"recipe"`
	Protocol        string  `json:"protocol"`
	ResultType      string  `json:"result_type"`
	OriginalText    string  `json:"original_text"`
	PerturbedText   string  `json:"perturbed_text"`
	OriginalOutput  int     `json:"original_output"`
	PerturbedOutput int     `json:"perturbed_output"`
	GroundTruth     int     `json:"ground_truth_output"`
	OriginalLabel   string  `json:"original_label"`
	PerturbedLabel  string  `json:"perturbed_label"`
	NumQueries      int     `json:"num_queries"`
	NumRequests     int     `json:"num_queries_with_repeats"`
	NumWords        int     `json:"num_words"`
	NumPerturbed    int     `json:"num_perturbed"`
	Seconds         float64 `json:"seconds"`
	Note            string  `json:"note,omitempty"`
	QueryBudget     int     `json:"query_budget"`
}

func (s *Server) attack(w http.ResponseWriter, r *http.Request) error {
	var req AttackRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	switch {
	case req.Recipe == "":
		return badRequest(`"recipe" is required (%s)`, strings.Join(attack.RecipeNames(), ", "))
	case req.QueryBudget < 0 || req.QueryBudget > s.cfg.MaxQueries:
		return badRequest("query_budget %d must be in [0, %d] (0 = %d, the server's cap --max-queries)", req.QueryBudget, s.cfg.MaxQueries, s.cfg.MaxQueries)
	}
	switch req.Protocol {
	case attack.ProtocolPaper, attack.ProtocolFTML, attack.ProtocolFLAT:
	default:
		return badRequest("protocol %q: want ftml or flat (or leave it out)", req.Protocol)
	}
	rc, err := attack.LookupRecipe(req.Recipe)
	if err != nil {
		return badRequest("%v", err)
	}
	e, release, err := s.acquireFor(r, req.Model)
	if err != nil {
		return err
	}
	defer release()
	if err := needClasses(e, "attacks"); err != nil {
		return err
	}
	if err := s.checkTexts(e, []string{req.Text}, 1); err != nil {
		return err
	}
	if req.Label != nil && (*req.Label < 0 || *req.Label >= len(e.m.Classes)) {
		return badRequest("label %d: the model has %d classes (0..%d)", *req.Label, len(e.m.Classes), len(e.m.Classes)-1)
	}
	ctx, cancel := s.deadline(r)
	defer cancel()
	done, err := s.heavySlot(ctx, e.name)
	if err != nil {
		return err
	}
	defer done()
	e.m.AddWords(req.Text)
	cfg, err := s.recipe(e, rc, req.Protocol)
	if err != nil {
		return err
	}
	a := *cfg.Attack
	a.QueryBudget = req.QueryBudget
	if a.QueryBudget == 0 {
		a.QueryBudget = s.cfg.MaxQueries
	}
	tg := attack.FromModel(e.m)
	tg.Victim = &deadlineVictim{v: tg.Victim, ctx: ctx, classes: len(e.m.Classes)}
	label := 0
	if req.Label != nil {
		label = *req.Label
	} else {
		label = e.m.PredictTexts([]string{req.Text})[0].Class
	}
	res, err := a.Run(tg, attack.Example{Text: req.Text, Label: label}, req.Seed)
	if err != nil {
		return badRequest("%v", err)
	}
	s.met.queries.WithLabelValues(e.name).Add(float64(res.NumQueries))
	if ctx.Err() != nil {
		return s.batchError(ctx, e.name, ctx.Err())
	}
	writeJSON(w, http.StatusOK, AttackResponse{Model: e.name, Recipe: cfg.Recipe, Protocol: req.Protocol, ResultType: string(res.Type),
		OriginalText: res.OriginalText, PerturbedText: res.PerturbedText, OriginalOutput: res.OriginalOutput, PerturbedOutput: res.PerturbedOutput,
		GroundTruth: res.GroundTruth, OriginalLabel: e.m.Classes[res.OriginalOutput], PerturbedLabel: e.m.Classes[res.PerturbedOutput],
		NumQueries: res.NumQueries, NumRequests: res.NumRequests, NumWords: res.NumWords, NumPerturbed: res.NumPerturbed,
		Seconds: res.Seconds, Note: res.Note, QueryBudget: a.QueryBudget})
	return nil
}

// recipe builds (once per model, recipe and protocol) the attack with the
// server's resources.
func (s *Server) recipe(e *entry, rc attack.Recipe, protocol string) (*attack.Configured, error) {
	e.recipeMu.Lock()
	defer e.recipeMu.Unlock()
	key := rc.Name + "|" + protocol
	if cfg := e.recipes[key]; cfg != nil {
		return cfg, nil
	}
	res := s.cfg.Attack
	res.Log = s.log
	res.Nearest = res.Nearest.Resolve(rc.Needs(protocol))
	cfg, err := pipeline.BuildRecipe(rc, protocol, e.m, res)
	if err != nil {
		return nil, badRequest("recipe %s (protocol %q) cannot run on this server: %v", rc.Name, protocol, err)
	}
	e.recipes[key] = cfg
	return cfg, nil
}

// deadlineVictim answers uniform probabilities once ctx is done, so that
// an attack past its request's deadline ends at once (its answer is then
// discarded). It hides the incremental fast path, which would bypass it.
type deadlineVictim struct {
	v       attack.Victim
	ctx     context.Context
	classes int
}

func (d *deadlineVictim) Predict(seqs [][]int32) [][]float32 {
	if d.ctx.Err() == nil {
		return d.v.Predict(seqs)
	}
	out := make([][]float32, len(seqs))
	for i := range out {
		out[i] = make([]float32, d.classes)
		for k := range out[i] {
			out[i][k] = 1 / float32(d.classes)
		}
	}
	return out
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) error {
	if err := s.Reload(); err != nil {
		return &apiError{http.StatusInternalServerError, fmt.Sprintf("reload failed; the models loaded before are still served: %v", err)}
	}
	return s.listModels(w, r)
}

// ModelInfo describes a served model (/v1/models).
type ModelInfo struct {
	Name      string    `json:"name"`
	Dir       string    `json:"dir"`
	Arch      string    `json:"arch"`
	Classes   []string  `json:"classes"`
	Tokenizer string    `json:"tokenizer"`
	MaxLen    int       `json:"max_len"`
	Digest    string    `json:"digest"`
	Embed     bool      `json:"embed"`
	Loaded    time.Time `json:"loaded"`
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) error {
	s.mu.RLock()
	var out []ModelInfo
	for _, n := range s.sortedLocked() {
		e := s.models[n]
		out = append(out, ModelInfo{Name: e.name, Dir: e.dir, Arch: e.m.Net.Cfg.Arch, Classes: e.m.Classes, Tokenizer: e.m.Tok.Name(),
			MaxLen: e.m.MaxLen, Digest: e.digest, Embed: e.embed != nil, Loaded: e.loaded})
	}
	s.mu.RUnlock()
	writeJSON(w, http.StatusOK, map[string]any{"models": out})
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return &apiError{http.StatusServiceUnavailable, "the server is shutting down"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "models": s.names()})
	return nil
}
