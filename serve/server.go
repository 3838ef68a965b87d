package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
)

// Server answers the API for a set of models. Create it with New; its
// Handler serves the API, Reload re-reads the models, Close stops it
// once no request is in flight (Run does all of that).
type Server struct {
	cfg   Config
	specs []modelSpec
	log   io.Writer
	met   *metrics

	mu     sync.RWMutex // guards models; Reload swaps it whole
	models map[string]*entry

	reloadMu sync.Mutex // one reload at a time
	draining atomic.Bool
	heavy    chan struct{} // explain and attack slots
	waiting  atomic.Int64  // heavy requests waiting for a slot
	retired  sync.WaitGroup
	handler  http.Handler
}

// entry is one loaded model with its batchers. Requests hold it through
// inflight; a reload retires it (its batchers stop) once they are done.
type entry struct {
	name, dir, digest string
	m                 *model.Model
	loaded            time.Time
	predict           *batcher[model.Prediction]
	embed             *batcher[[]float32] // nil: not a transformer
	inflight          sync.WaitGroup

	recipeMu sync.Mutex
	recipes  map[string]*attack.Configured // by recipe and protocol
}

// New loads every model of cfg (all or none) and returns the server.
func New(cfg Config) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	specs, _ := cfg.specs()
	s := &Server{cfg: cfg, specs: specs, log: cfg.Log, met: newMetrics(), heavy: make(chan struct{}, cfg.Workers)}
	if s.log == nil {
		s.log = io.Discard
	}
	models, err := s.loadAll()
	if err != nil {
		return nil, err
	}
	s.models = models
	s.handler = s.routes()
	return s, nil
}

// loadAll loads every model afresh with its batchers started; on an error
// none is kept.
func (s *Server) loadAll() (map[string]*entry, error) {
	out := map[string]*entry{}
	for _, sp := range s.specs {
		e, err := s.load(sp)
		if err != nil {
			for _, e := range out {
				e.stop()
			}
			return nil, fmt.Errorf("model %s: %w", sp.name, err)
		}
		out[sp.name] = e
	}
	return out, nil
}

// load opens one model (checksums verified; a Hugging Face directory is
// imported) and starts its batchers.
func (s *Server) load(sp modelSpec) (*entry, error) {
	m, err := model.Open(sp.dir)
	if err != nil {
		return nil, err
	}
	digest, err := m.WeightsDigest()
	if err != nil {
		return nil, err
	}
	e := &entry{name: sp.name, dir: sp.dir, digest: digest, m: m, loaded: time.Now(), recipes: map[string]*attack.Configured{}}
	c := s.cfg
	e.predict = newBatcher(func(texts []string) ([]model.Prediction, error) { return m.PredictTexts(texts), nil },
		c.MaxBatch, c.MaxWait, c.Queue, c.Workers)
	s.instrument("predict", sp.name, &e.predict.observe, &e.predict.gauge)
	if _, ok := m.Net.Enc.(*nn.Transformer); ok {
		e.embed = newBatcher(m.Embed, c.MaxBatch, c.MaxWait, c.Queue, c.Workers)
		s.instrument("embed", sp.name, &e.embed.observe, &e.embed.gauge)
	}
	s.met.loaded.WithLabelValues(sp.name, digest).Set(float64(e.loaded.Unix()))
	fmt.Fprintf(s.log, "loaded %s from %s (%s, %d classes, weights %s)\n", sp.name, sp.dir, m.Net.Cfg.Arch, len(m.Classes), digest[:12])
	return e, nil
}

// instrument points a batcher's hooks at the metrics.
func (s *Server) instrument(kind, name string, observe *func(int, time.Duration), gauge *func(int64)) {
	batch, fwd, q := s.met.batch.WithLabelValues(name, kind), s.met.forward.WithLabelValues(name, kind), s.met.queue.WithLabelValues(name, kind)
	*observe = func(n int, d time.Duration) { batch.Observe(float64(n)); fwd.Observe(d.Seconds()) }
	*gauge = func(n int64) { q.Set(float64(n)) }
}

// stop closes the entry's batchers.
func (e *entry) stop() {
	e.predict.close()
	if e.embed != nil {
		e.embed.close()
	}
}

// Reload loads every model again from its directory and, only when all
// of them loaded, swaps them in at once: requests already holding a model
// finish on it, later ones get the new one; there is no moment without a
// model, and never a half-loaded one. On an error the old models stay.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	models, err := s.loadAll()
	if err != nil {
		s.met.reloads.WithLabelValues("failed").Inc()
		fmt.Fprintf(s.log, "reload failed, still serving the models loaded before: %v\n", err)
		return err
	}
	s.mu.Lock()
	old := s.models
	s.models = models
	s.mu.Unlock()
	for _, e := range old {
		if e.digest != models[e.name].digest {
			s.met.loaded.DeleteLabelValues(e.name, e.digest)
		}
		s.retired.Add(1)
		go func() {
			defer s.retired.Done()
			e.inflight.Wait()
			e.stop()
		}()
	}
	s.met.reloads.WithLabelValues("ok").Inc()
	fmt.Fprintf(s.log, "reloaded %s\n", strings.Join(s.names(), ", "))
	return nil
}

// names are the served models' names, sorted.
func (s *Server) names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var n []string
	for k := range s.models {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// acquire returns the named model ("" = the only one) held for a request
// until release is called. Requests name it in their body's "model", or
// else in the URL's query (/v1/predict?model=NAME, for a remote victim's
// URL).
func (s *Server) acquire(name string) (e *entry, release func(), err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if name == "" {
		if len(s.models) != 1 {
			return nil, nil, &apiError{http.StatusBadRequest, fmt.Sprintf("several models are served: name one in \"model\" (%s)", strings.Join(s.sortedLocked(), ", "))}
		}
		for _, m := range s.models {
			e = m
		}
	} else if e = s.models[name]; e == nil {
		return nil, nil, &apiError{http.StatusNotFound, fmt.Sprintf("unknown model %q (served: %s)", name, strings.Join(s.sortedLocked(), ", "))}
	}
	e.inflight.Add(1)
	return e, e.inflight.Done, nil
}

func (s *Server) sortedLocked() []string {
	var n []string
	for k := range s.models {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// Handler is the API.
func (s *Server) Handler() http.Handler { return s.handler }

// Drain makes /healthz answer 503 and new model requests 503, so that a
// load balancer stops sending requests before a shutdown.
func (s *Server) Drain() { s.draining.Store(true) }

// Close stops every model's batchers, after the requests holding them
// (call it once the HTTP server has shut down).
func (s *Server) Close() {
	s.draining.Store(true)
	s.mu.Lock()
	models := s.models
	s.models = map[string]*entry{}
	s.mu.Unlock()
	for _, e := range models {
		e.inflight.Wait()
		e.stop()
	}
	s.retired.Wait()
}

// apiError is an answer other than 200: its status and message.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

// batchError maps a batcher's refusal to its answer.
func (s *Server) batchError(ctx context.Context, model string, err error) *apiError {
	switch {
	case errors.Is(err, errQueueFull):
		s.met.rejected.WithLabelValues(model, "queue_full").Inc()
		return &apiError{http.StatusTooManyRequests, fmt.Sprintf("model %s: the queue is full (at most %d texts wait, --queue); retry later",
			model, s.cfg.Queue)}
	case errors.Is(err, errStopped):
		s.met.rejected.WithLabelValues(model, "shutting_down").Inc()
		return &apiError{http.StatusServiceUnavailable, "the server is shutting down"}
	case ctx.Err() != nil:
		s.met.rejected.WithLabelValues(model, "deadline").Inc()
		return &apiError{http.StatusServiceUnavailable, fmt.Sprintf("model %s: no answer within the request deadline (--timeout %s)", model, s.cfg.Timeout)}
	}
	return &apiError{http.StatusInternalServerError, err.Error()}
}
