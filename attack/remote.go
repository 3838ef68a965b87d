package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/textarmor/textarmor/text"
)

// The remote victim protocol (docs/serving.md has it in full): a POST of
//
//	{"model": "NAME", "texts": ["a text", ...]}
//
// ("model" optional) with Content-Type application/json, answered 200 with
//
//	{"classes": ["neg", "pos"], "predictions": [{"probs": [0.1, 0.9]}, ...]}
//
// one prediction per text in order, each a probability per class (finite,
// in [0, 1], summing to 1). A request without texts is answered with the
// classes and no predictions. Optional answer fields: "model", "tokenizer"
// (the word tokenizer an attack splits texts with), "unk_text" (what a
// word-importance order writes in place of a word) and "digest" (an
// identity of the weights: a run refuses a model changed under it).
// Errors are a non-200 status with {"error": "..."}; 429 and 5xx are
// retried. `textarmor serve`'s /v1/predict speaks it.

// RemoteRequest is the protocol's request body.
type RemoteRequest struct {
	Model string   `json:"model,omitempty"`
	Texts []string `json:"texts"`
}

// RemoteResponse is the protocol's answer (the fields a client reads).
type RemoteResponse struct {
	Model       string             `json:"model,omitempty"`
	Classes     []string           `json:"classes"`
	Tokenizer   string             `json:"tokenizer,omitempty"`
	UnkText     string             `json:"unk_text,omitempty"`
	Digest      string             `json:"digest,omitempty"`
	Predictions []RemotePrediction `json:"predictions"`
}

// RemotePrediction is one text's answer.
type RemotePrediction struct {
	Probs []float32 `json:"probs"`
}

// RemoteOptions configure a RemoteModel; zero values take the defaults.
type RemoteOptions struct {
	Model       string        // the request's "model" ("" = the server's only one)
	Batch       int           // texts per request (default 32)
	Concurrency int           // requests in flight at once, over all callers (default 4)
	Timeout     time.Duration // each request's deadline (default 60 s)
	// Retries is how many times a request is tried again after a 429, a
	// 5xx, a timeout or a connection error (default 4; < 0: never), with
	// a wait of Backoff (default 200 ms) doubled after each try, or the
	// server's Retry-After when longer (up to 30 s).
	Retries int
	Backoff time.Duration
	// Budget is how many texts may be sent in all, 0 = no limit: a query
	// past it fails the model (Err), which stops a run.
	Budget int64
	Client *http.Client // nil: one with a connection pool of Concurrency
}

// Defaults of RemoteOptions.
const (
	DefaultRemoteBatch       = 32
	DefaultRemoteConcurrency = 4
	DefaultRemoteTimeout     = 60 * time.Second
	DefaultRemoteRetries     = 4
	DefaultRemoteBackoff     = 200 * time.Millisecond
	maxRetryAfter            = 30 * time.Second
	maxRemoteAnswer          = 256 << 20 // bytes read of one answer
)

// RemoteModel is a classifier behind an HTTP endpoint speaking the remote
// victim protocol: a TextVictim for attacks (Target), batching texts into
// requests, Concurrency requests at a time, retrying transient failures.
// It is safe for concurrent use.
type RemoteModel struct {
	url  string
	opt  RemoteOptions
	info RemoteResponse // the handshake's answer (no predictions)
	sem  chan struct{}

	sent, requests, retries atomic.Int64

	mu  sync.Mutex
	err error
}

// NewRemoteModel checks the options and asks the endpoint for its classes
// (a request without texts).
func NewRemoteModel(ctx context.Context, endpoint string, opt RemoteOptions) (*RemoteModel, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote victim %q: want an http:// or https:// URL with a host", endpoint)
	}
	switch {
	case opt.Batch < 0, opt.Concurrency < 0, opt.Timeout < 0, opt.Backoff < 0, opt.Budget < 0:
		return nil, fmt.Errorf("remote victim %s: negative option in %+v", endpoint, opt)
	}
	if opt.Batch == 0 {
		opt.Batch = DefaultRemoteBatch
	}
	if opt.Concurrency == 0 {
		opt.Concurrency = DefaultRemoteConcurrency
	}
	if opt.Timeout == 0 {
		opt.Timeout = DefaultRemoteTimeout
	}
	if opt.Retries == 0 {
		opt.Retries = DefaultRemoteRetries
	}
	opt.Retries = max(opt.Retries, 0)
	if opt.Backoff == 0 {
		opt.Backoff = DefaultRemoteBackoff
	}
	if opt.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = opt.Concurrency
		opt.Client = &http.Client{Transport: tr}
	}
	r := &RemoteModel{url: endpoint, opt: opt, sem: make(chan struct{}, opt.Concurrency)}
	info, err := r.post(ctx, nil)
	if err != nil {
		return nil, err
	}
	info.Predictions = nil
	r.info = *info
	return r, nil
}

// URL is the endpoint.
func (r *RemoteModel) URL() string { return r.url }

// Classes are the class names the endpoint gave.
func (r *RemoteModel) Classes() []string { return slices.Clone(r.info.Classes) }

// Info is the endpoint's answer to the handshake (no predictions): its
// classes and the optional fields it sent.
func (r *RemoteModel) Info() RemoteResponse { return r.info }

// Sent counts the texts sent for prediction, Requests the requests that
// answered, Retries the tries after a transient failure.
func (r *RemoteModel) Sent() int64     { return r.sent.Load() }
func (r *RemoteModel) Requests() int64 { return r.requests.Load() }
func (r *RemoteModel) Retries() int64  { return r.retries.Load() }

// Target is the remote model as an attack's victim: candidates are written
// into the text and sent as text, over the open word vocabulary vocab
// split by tok (the endpoint's "tokenizer" when it names one).
func (r *RemoteModel) Target(vocab *text.Vocab, tok text.Tokenizer) Target {
	unk := r.info.UnkText
	if unk == "" {
		unk = "[UNK]"
	}
	return Target{Texts: r, Vocab: vocab, Tok: tok, UnkText: unk}
}

// Err is the first failure of PredictTexts (nil while there is none).
func (r *RemoteModel) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// PredictTexts is Query for the attack: a failure is kept (Err) and every
// row is then uniform; once failed it sends nothing more.
func (r *RemoteModel) PredictTexts(texts []string) [][]float32 {
	if r.Err() == nil {
		out, err := r.Query(context.Background(), texts)
		if err == nil {
			return out
		}
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	out := make([][]float32, len(texts))
	c := len(r.info.Classes)
	for i := range out {
		out[i] = make([]float32, c)
		for k := range out[i] {
			out[i][k] = 1 / float32(c)
		}
	}
	return out
}

// Query returns the class probabilities of texts, in order: Batch texts
// per request, Concurrency requests at a time.
func (r *RemoteModel) Query(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if b := r.opt.Budget; b > 0 {
		if n := r.sent.Add(int64(len(texts))); n > b {
			r.sent.Add(-int64(len(texts)))
			return nil, fmt.Errorf("remote victim %s: the budget of %d texts is spent (%d sent, %d more asked)", r.url, b, n-int64(len(texts)), len(texts))
		}
	} else {
		r.sent.Add(int64(len(texts)))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([][]float32, len(texts))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for lo := 0; lo < len(texts); lo += r.opt.Batch {
		part := texts[lo:min(lo+r.opt.Batch, len(texts))]
		select {
		case r.sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			if first != nil {
				return nil, first
			}
			return nil, fmt.Errorf("remote victim %s: %w", r.url, context.Cause(ctx))
		}
		wg.Add(1)
		go func(lo int, part []string) {
			defer func() { <-r.sem; wg.Done() }()
			res, err := r.post(ctx, part)
			if err != nil {
				once.Do(func() { first = err; cancel() })
				return
			}
			for j, p := range res.Predictions {
				out[lo+j] = p.Probs
			}
		}(lo, part)
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// post sends one request (retrying transient failures) and checks the
// answer's shape against texts.
func (r *RemoteModel) post(ctx context.Context, texts []string) (*RemoteResponse, error) {
	if texts == nil {
		texts = []string{}
	}
	body, err := json.Marshal(RemoteRequest{Model: r.opt.Model, Texts: texts})
	if err != nil {
		return nil, fmt.Errorf("remote victim %s: %w", r.url, err)
	}
	wait := r.opt.Backoff
	for try := 0; ; try++ {
		res, retryAfter, err := r.try(ctx, body)
		if err == nil {
			r.requests.Add(1)
			if err := r.check(res, len(texts)); err != nil {
				return nil, fmt.Errorf("remote victim %s: %w", r.url, err)
			}
			return res, nil
		}
		var te *transientError
		if !errors.As(err, &te) || try >= r.opt.Retries || ctx.Err() != nil {
			if try > 0 {
				err = fmt.Errorf("%w (after %d tries)", err, try+1)
			}
			return nil, fmt.Errorf("remote victim %s: %w", r.url, err)
		}
		r.retries.Add(1)
		d := max(wait, min(retryAfter, maxRetryAfter))
		wait *= 2
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, fmt.Errorf("remote victim %s: %w (while waiting to retry)", r.url, err)
		}
	}
}

// transientError is a failure worth another try.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// try makes one request; it returns the server's Retry-After with a
// transient failure.
func (r *RemoteModel) try(ctx context.Context, body []byte) (*RemoteResponse, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := r.opt.Client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, 0, err // the caller gave up
			}
			return nil, 0, &transientError{err}
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxRemoteAnswer+1))
	if err != nil {
		return nil, 0, &transientError{fmt.Errorf("reading the answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("%s%s", resp.Status, serverMessage(raw))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, retryAfter(resp.Header.Get("Retry-After")), &transientError{err}
		}
		return nil, 0, err
	}
	if len(raw) > maxRemoteAnswer {
		return nil, 0, fmt.Errorf("the answer is over %d bytes", maxRemoteAnswer)
	}
	var res RemoteResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, 0, fmt.Errorf("the answer is not the protocol's JSON (NaN and Infinity are not JSON numbers): %w", err)
	}
	return &res, 0, nil
}

// serverMessage is ": " and the error an answer's JSON gives (or the start
// of its body), "" when there is none.
func serverMessage(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return ": " + e.Error
	}
	s := string(bytes.TrimSpace(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(h); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// check validates an answer to n texts: the classes (those of the
// handshake, once there was one), one prediction per text, and each a
// probability per class.
func (r *RemoteModel) check(res *RemoteResponse, n int) error {
	switch {
	case len(res.Classes) < 2:
		return fmt.Errorf("the answer names %d classes (the protocol's \"classes\" needs at least 2)", len(res.Classes))
	case r.info.Classes != nil && !slices.Equal(res.Classes, r.info.Classes):
		return fmt.Errorf("the endpoint's classes changed from %q to %q", r.info.Classes, res.Classes)
	case r.info.Digest != "" && res.Digest != r.info.Digest:
		return fmt.Errorf("the served model changed during the run (digest %q, now %q)", r.info.Digest, res.Digest)
	case len(res.Predictions) != n:
		return fmt.Errorf("the answer has %d predictions for %d texts", len(res.Predictions), n)
	}
	for i, p := range res.Predictions {
		if len(p.Probs) != len(res.Classes) {
			return fmt.Errorf("prediction %d has %d probabilities for %d classes", i, len(p.Probs), len(res.Classes))
		}
		sum := 0.0
		for k, v := range p.Probs {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("prediction %d: probability %d is %g, not in [0, 1]", i, k, v)
			}
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-3 {
			return fmt.Errorf("prediction %d: the probabilities sum to %.4g, not 1 (logits rather than probabilities?)", i, sum)
		}
	}
	return nil
}
