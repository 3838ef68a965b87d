// Package serve is textarmor's HTTP JSON API: predictions, explanations,
// sentence embeddings and attacks of one or more models, with the
// predictions and embeddings of concurrent requests micro-batched into
// shared forward passes, bounded queues that answer 429 instead of growing,
// per-request limits and deadlines, Prometheus metrics, model reload
// without downtime and graceful shutdown. docs/serving.md describes the
// API; its /v1/predict speaks the remote victim protocol that
// attack.RemoteModel queries.
package serve

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/pipeline"
)

// Config is one server: the models it serves and its limits. Comments
// name the CLI flags of `textarmor serve`.
type Config struct {
	// Models are model directories (a textarmor model or a Hugging Face
	// directory), each "DIR" (named by its base name) or "NAME=DIR"
	// (--model, repeatable; at least one).
	Models []string
	Addr   string // listen address (--addr)
	// MaxBatch is how many texts one forward pass takes at most (--max-batch;
	// 1 = no micro-batching across requests), MaxWait how long the first
	// request of a pass waits for others to join it (--max-wait; 0 = only
	// those already queued).
	MaxBatch int
	MaxWait  time.Duration
	// Workers is how many forward passes run at once per model and kind,
	// and how many explain and attack requests run at once (--workers).
	Workers int
	// Queue bounds the texts waiting per model and kind: a request that
	// would pass it is answered 429 at once (--queue). HeavyQueue bounds
	// the explain and attack requests waiting for a worker likewise.
	Queue, HeavyQueue int
	// MaxBody is the largest request body in bytes (--max-body), MaxTexts
	// the most texts per request (--max-texts), MaxWords the most words
	// per text as the model's tokenizer splits it (--max-words): larger
	// requests get 413.
	MaxBody            int64
	MaxTexts, MaxWords int
	// Timeout is each request's deadline, queueing included (--timeout):
	// past it the request gets 503.
	Timeout time.Duration
	// MaxQueries caps an attack's query budget (--max-queries); MaxSteps,
	// MaxSamples and MaxExplainTexts cap an explanation's IG steps, LIME
	// samples and texts.
	MaxQueries, MaxSteps, MaxSamples, MaxExplainTexts int
	// Attack says where /v1/attack's recipes find their resources
	// (--synonyms, --wordnet, --vectors, --data).
	Attack pipeline.AttackResources
	// ShutdownGrace is how long a shutdown waits for requests in flight
	// (default Timeout plus 5 s).
	ShutdownGrace time.Duration
	// Log receives what is loaded, reloaded and refused (nil = discard).
	Log io.Writer
	// OnListen, when set, is called with the address once Run listens.
	OnListen func(net.Addr)
}

// Defaults of NewConfig.
const (
	DefaultAddr     = "127.0.0.1:8080"
	DefaultMaxBatch = 32
	DefaultMaxWait  = 5 * time.Millisecond
	DefaultQueue    = 1024
	DefaultMaxBody  = 4 << 20
	DefaultMaxTexts = 256
	DefaultMaxWords = 2000
	DefaultTimeout  = 30 * time.Second
)

// NewConfig returns the CLI's defaults.
func NewConfig() Config {
	return Config{Addr: DefaultAddr, MaxBatch: DefaultMaxBatch, MaxWait: DefaultMaxWait, Workers: 1, Queue: DefaultQueue, HeavyQueue: 8,
		MaxBody: DefaultMaxBody, MaxTexts: DefaultMaxTexts, MaxWords: DefaultMaxWords, Timeout: DefaultTimeout,
		MaxQueries: 2000, MaxSteps: 300, MaxSamples: 5000, MaxExplainTexts: 16,
		Attack: pipeline.AttackResources{WordNet: lexicon.DefaultWordNetDir(), Nearest: pipeline.NewNearestConfig(), CacheDir: pipeline.NearestCacheDir("")}}
}

// Check validates the configuration: numbers (naming the flag) and model
// names. Errors are *pipeline.ConfigError.
func (c Config) Check() error {
	err := pipeline.CheckRules(
		pipeline.Rule{OK: c.MaxBatch >= 1 && c.MaxBatch <= 4096, Flag: "max-batch", Val: c.MaxBatch, Want: "in [1, 4096]"},
		pipeline.Rule{OK: c.MaxWait >= 0 && c.MaxWait <= time.Second, Flag: "max-wait", Val: c.MaxWait, Want: "in [0, 1s]"},
		pipeline.Rule{OK: c.Workers >= 1 && c.Workers <= 256, Flag: "workers", Val: c.Workers, Want: "in [1, 256]"},
		pipeline.Rule{OK: c.Queue >= 1 && c.Queue <= 1<<20, Flag: "queue", Val: c.Queue, Want: "in [1, 1048576]"},
		pipeline.Rule{OK: c.HeavyQueue >= 0 && c.HeavyQueue <= 1<<16, Flag: "heavy-queue", Val: c.HeavyQueue, Want: "in [0, 65536]"},
		pipeline.Rule{OK: c.MaxBody >= 64 && c.MaxBody <= 1<<30, Flag: "max-body", Val: c.MaxBody, Want: "in [64, 1073741824] bytes"},
		pipeline.Rule{OK: c.MaxTexts >= 1 && c.MaxTexts <= 1<<16, Flag: "max-texts", Val: c.MaxTexts, Want: "in [1, 65536]"},
		pipeline.Rule{OK: c.MaxWords >= 1 && c.MaxWords <= 1<<20, Flag: "max-words", Val: c.MaxWords, Want: "in [1, 1048576]"},
		pipeline.Rule{OK: c.Timeout > 0 && c.Timeout <= 24*time.Hour, Flag: "timeout", Val: c.Timeout, Want: "in (0, 24h]"},
		pipeline.Rule{OK: c.MaxQueries >= 1 && c.MaxQueries <= 1e7, Flag: "max-queries", Val: c.MaxQueries, Want: "in [1, 10000000]"},
		pipeline.Rule{OK: c.MaxSteps >= 1 && c.MaxSteps <= 100000, Flag: "max-steps", Val: c.MaxSteps, Want: "in [1, 100000]"},
		pipeline.Rule{OK: c.MaxSamples >= 2 && c.MaxSamples <= 1000000, Flag: "max-samples", Val: c.MaxSamples, Want: "in [2, 1000000]"},
		pipeline.Rule{OK: c.MaxExplainTexts >= 1 && c.MaxExplainTexts <= 1<<16, Flag: "max-explain-texts", Val: c.MaxExplainTexts, Want: "in [1, 65536]"},
		pipeline.Rule{OK: c.ShutdownGrace >= 0, Flag: "shutdown-grace", Val: c.ShutdownGrace, Want: "≥ 0"},
	)
	if err != nil {
		return err
	}
	if c.Addr == "" {
		return &pipeline.ConfigError{Err: fmt.Errorf("--addr is required (host:port, e.g. %s)", DefaultAddr)}
	}
	_, err = c.specs()
	return err
}

// modelSpec is one served model: its name in requests and its directory.
type modelSpec struct{ name, dir string }

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// specs parses Models: names valid and unique.
func (c Config) specs() ([]modelSpec, error) {
	if len(c.Models) == 0 {
		return nil, &pipeline.ConfigError{Err: fmt.Errorf("--model is required (a model directory, or NAME=DIR; repeat it to serve several)")}
	}
	var out []modelSpec
	seen := map[string]string{}
	for _, s := range c.Models {
		name, dir, named := strings.Cut(s, "=")
		if !named {
			dir, name = s, filepath.Base(filepath.Clean(s))
		}
		switch {
		case dir == "":
			return nil, &pipeline.ConfigError{Err: fmt.Errorf("--model %q: no directory", s)}
		case !validName.MatchString(name):
			return nil, &pipeline.ConfigError{Err: fmt.Errorf("--model %q: the name %q must be letters, digits, '.', '_' and '-' (give NAME=DIR)", s, name)}
		case seen[name] != "":
			return nil, &pipeline.ConfigError{Err: fmt.Errorf("--model %q: the name %q is taken by %s (give NAME=DIR)", s, name, seen[name])}
		}
		seen[name] = dir
		out = append(out, modelSpec{name, dir})
	}
	return out, nil
}

// shutdownGrace is ShutdownGrace or its default.
func (c Config) shutdownGrace() time.Duration {
	if c.ShutdownGrace > 0 {
		return c.ShutdownGrace
	}
	return c.Timeout + 5*time.Second
}
