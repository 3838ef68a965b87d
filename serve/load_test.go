package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
)

// The measurements of docs/serving.md. They load the CPU for a while, so
// they run only when asked:
//
//	TEXTARMOR_SERVE_LOAD=1 go test ./serve -run TestLoadTable -v
//	TEXTARMOR_SERVE_LOAD=1 go test ./serve -run TestRemoteOverhead -v
//
// TEXTARMOR_SERVE_LOAD_SECONDS sets each point's duration (default 3),
// TEXTARMOR_SERVE_LOAD_ARCH the model: transformer (MiniLM-L6's shape:
// 6 layers, 384 wide, 12 heads, random weights; the default) or cnn.
func loadEnabled(t *testing.T) {
	if os.Getenv("TEXTARMOR_SERVE_LOAD") == "" {
		t.Skip("set TEXTARMOR_SERVE_LOAD=1 to measure (it loads the CPU)")
	}
}

// benchModel saves a model of the arch given into dir.
func benchModel(t testing.TB, dir, arch string) {
	t.Helper()
	switch arch {
	case "cnn":
		vocab, err := text.NewVocab(append([]string{"<pad>", "<unk>"}, lexWords()...))
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.New(model.Meta{Net: nn.DefaultConfig("cnn"), Tokenizer: "flat", MaxLen: 50, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		saveLoad(t, m, dir)
	case "transformer", "small-transformer", "medium-transformer":
		wp, err := text.NewWordPiece(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", "."}, lexWords()...), text.DefaultWordPieceOptions())
		if err != nil {
			t.Fatal(err)
		}
		cfg := nn.DefaultConfig("transformer")
		tc := *cfg.Transformer
		switch arch {
		case "transformer":
			tc.Layers, tc.Heads, tc.Intermediate, cfg.EmbedDim = 6, 12, 1536, 384
		case "medium-transformer":
			tc.Layers, tc.Heads, tc.Intermediate, cfg.EmbedDim = 4, 4, 1024, 256
		}
		cfg.Transformer = &tc
		opts := wp.Options()
		m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 128, Classes: []string{"neg", "pos"}, Pieces: &opts},
			wp, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		if arch != "transformer" {
			spread(m)
		}
		saveLoad(t, m, dir)
	default:
		t.Fatalf("TEXTARMOR_SERVE_LOAD_ARCH %q: want transformer or cnn", arch)
	}
}

// loadPoint is one measured setting.
type loadPoint struct {
	mode                 string
	concurrency          int
	throughput           float64
	p50, p99             time.Duration
	codes                map[string]int
	requests             uint64
	textsPerPass, passes float64
	cpu                  time.Duration // the process's CPU time over the point
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLoadTable measures throughput and latency of /v1/predict (one
// 20-word text per request) at concurrency 1, 8 and 64 without
// micro-batching (--max-batch 1) and with it (--max-batch 32, --max-wait
// 5ms and 0), with vegeta as the client, then at concurrency 64 against a
// queue of 16 texts: only 429s and 503s may fail.
func TestLoadTable(t *testing.T) {
	loadEnabled(t)
	secs := 3.0
	if s := os.Getenv("TEXTARMOR_SERVE_LOAD_SECONDS"); s != "" {
		var err error
		if secs, err = strconv.ParseFloat(s, 64); err != nil || secs <= 0 || secs > 60 {
			t.Fatalf("TEXTARMOR_SERVE_LOAD_SECONDS %q: want seconds in (0, 60]", s)
		}
	}
	arch := cmpOr(os.Getenv("TEXTARMOR_SERVE_LOAD_ARCH"), "transformer")
	dir := t.TempDir()
	benchModel(t, filepath.Join(dir, "m"), arch)
	var targets []vegeta.Target
	rng := rand.New(rand.NewSource(1))
	w := lexWords()
	for range 64 {
		var words []string
		for range 20 {
			words = append(words, w[rng.Intn(len(w))])
		}
		body, _ := json.Marshal(PredictRequest{Texts: []string{strings.Join(words, " ")}})
		targets = append(targets, vegeta.Target{Method: "POST", Body: body, Header: http.Header{"Content-Type": {"application/json"}}})
	}
	run := func(mode string, maxBatch int, wait time.Duration, queue, conc int) loadPoint {
		cfg := NewConfig()
		cfg.Models = []string{filepath.Join(dir, "m")}
		cfg.MaxBatch, cfg.MaxWait, cfg.Queue, cfg.Timeout = maxBatch, wait, queue, time.Minute
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s.Handler()) // 127.0.0.1
		defer func() { ts.Close(); s.Close() }()
		tg := make([]vegeta.Target, len(targets))
		for i, x := range targets {
			x.URL = ts.URL + "/v1/predict"
			tg[i] = x
		}
		// Warm up, then conc clients sending back to back for secs.
		post(t, ts.URL+"/v1/predict", tg[0].Body, nil)
		atk := vegeta.NewAttacker(vegeta.Workers(uint64(conc)), vegeta.MaxWorkers(uint64(conc)), vegeta.Connections(conc), vegeta.Timeout(2*time.Minute))
		var m vegeta.Metrics
		cpu0 := cpuTime()
		for res := range atk.Attack(vegeta.NewStaticTargeter(tg...), vegeta.Rate{}, time.Duration(secs*float64(time.Second)), mode) {
			m.Add(res)
		}
		m.Close()
		cpu := cpuTime() - cpu0
		_, page := get(t, ts.URL+"/metrics")
		p := loadPoint{mode: mode, concurrency: conc, throughput: m.Throughput, p50: m.Latencies.P50, p99: m.Latencies.P99,
			codes: m.StatusCodes, requests: m.Requests, cpu: cpu}
		p.passes, p.textsPerPass = batchStats(t, page)
		p.textsPerPass /= p.passes
		return p
	}
	fmt.Printf("model %s, GOMAXPROCS %d, %d CPUs, %.0f s per point, one 20-word text per request\n", arch, runtime.GOMAXPROCS(0), runtime.NumCPU(), secs)
	fmt.Printf("%-26s %5s %9s %9s %10s %10s %8s %6s  %s\n", "mode", "conc", "req/s", "ok/CPU-s", "p50", "p99", "requests", "texts/pass", "status codes")
	var points []loadPoint
	for _, mode := range []struct {
		name  string
		batch int
		wait  time.Duration
	}{{"no micro-batching", 1, 0}, {"micro-batching (32, 5ms)", 32, 5 * time.Millisecond}, {"micro-batching (32, 0ms)", 32, 0}} {
		for _, conc := range []int{1, 8, 64} {
			p := run(mode.name, mode.batch, mode.wait, DefaultQueue, conc)
			points = append(points, p)
			fmt.Printf("%-26s %5d %9.2f %9.2f %10s %10s %8d %6.1f  %v\n", p.mode, p.concurrency, p.throughput, p.perCPU(), p.p50.Round(time.Millisecond),
				p.p99.Round(time.Millisecond), p.requests, p.textsPerPass, p.codes)
			for code := range p.codes {
				if code != "200" {
					t.Errorf("%s at %d: status %s below the queue bound", p.mode, p.concurrency, code)
				}
			}
		}
	}
	over := run("micro-batching, queue 16", 32, 5*time.Millisecond, 16, 64)
	fmt.Printf("%-26s %5d %9.2f %9.2f %10s %10s %8d %6.1f  %v\n", over.mode, over.concurrency, over.throughput, over.perCPU(), over.p50.Round(time.Millisecond),
		over.p99.Round(time.Millisecond), over.requests, over.textsPerPass, over.codes)
	for code := range over.codes {
		if code != "200" && code != "429" && code != "503" {
			t.Errorf("above the queue bound: status %s", code)
		}
	}
	fmt.Printf("micro-batching's throughput at concurrency 64: %.2f× with --max-wait 5ms, %.2f× with 0 (%.2f, %.2f vs %.2f req/s); per CPU second %.2f× and %.2f×\n",
		points[5].throughput/points[2].throughput, points[8].throughput/points[2].throughput, points[5].throughput, points[8].throughput, points[2].throughput,
		points[5].perCPU()/points[2].perCPU(), points[8].perCPU()/points[2].perCPU())
}

// perCPU is the answered requests per second of the process's CPU time
// (server and client together): throughput as the machine's other load
// does not move it.
func (p loadPoint) perCPU() float64 {
	return float64(p.codes["200"]) / p.cpu.Seconds()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestRemoteOverhead attacks a served transformer (2 layers 128 wide, and
// 4 layers 256 wide) with pwws and ga (protocol ftml) through the endpoint and in process, one worker each, the
// forward passes of the same size (the attack's candidates in one request
// and one pass: --victim-batch 256, --max-batch 256, --max-wait 0), and
// reports the wall times; the results must be equal.
func TestRemoteOverhead(t *testing.T) {
	loadEnabled(t)
	for _, arch := range []string{"small-transformer", "medium-transformer"} {
		t.Run(arch, func(t *testing.T) { remoteOverhead(t, arch) })
	}
}

func remoteOverhead(t *testing.T, arch string) {
	dir := t.TempDir()
	mdir := filepath.Join(dir, "m")
	benchModel(t, mdir, arch)
	var csvText strings.Builder
	csvText.WriteString("text,label\n")
	m, _ := model.Load(mdir)
	for _, e := range synth.Sentiment(30, 0, 3) {
		fmt.Fprintf(&csvText, "%q,%d\n", e.Text, m.PredictTexts([]string{e.Text})[0].Class)
	}
	te, syn := filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json")
	os.WriteFile(te, []byte(csvText.String()), 0o644)
	b, _ := json.Marshal(synth.DefaultLexicon().Synonyms())
	os.WriteFile(syn, b, 0o644)
	cfg := NewConfig()
	// One client: nobody to wait for (--max-wait 0).
	cfg.Models, cfg.MaxBatch, cfg.MaxWait = []string{mdir}, 256, 0
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); s.Close() }()
	for _, recipe := range []string{"pwws", "ga"} {
		attackOnce := func(victim bool) (*pipeline.AttackReport, time.Duration) {
			c := pipeline.NewAttackConfig()
			c.Data.Test, c.Recipe, c.Protocol, c.Synonyms, c.Workers = te, recipe, "ftml", syn, 1
			if victim {
				c.Victim, c.Remote.Batch = ts.URL+"/v1/predict", 256
			} else {
				c.Model = mdir
			}
			start := time.Now()
			rep, err := pipeline.Attack(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			return rep, time.Since(start)
		}
		attackOnce(false) // warm up
		var local, remote []time.Duration
		var lr, rr *pipeline.AttackReport
		for range 3 {
			r, d := attackOnce(false)
			lr, local = r, append(local, d)
			r, d = attackOnce(true)
			rr, remote = r, append(remote, d)
		}
		slices.Sort(local)
		slices.Sort(remote)
		for i := range lr.Results {
			a, b := lr.Results[i], rr.Results[i]
			if a.PerturbedText != b.PerturbedText || a.NumQueries != b.NumQueries || a.Type != b.Type {
				t.Errorf("%s example %d differs: %+v vs %+v", recipe, i, a, b)
			}
		}
		fmt.Printf("%s, %s on %d examples (%d successes, %.0f queries each): local %s, remote %s (medians of 3); overhead %.1f%%\n",
			arch, recipe, lr.Summary.N, lr.Summary.Successful, lr.Summary.AvgQueries, local[1].Round(time.Millisecond), remote[1].Round(time.Millisecond),
			100*(remote[1].Seconds()/local[1].Seconds()-1))
	}
}

// BenchmarkForward is the forward pass behind /v1/predict, per text, one
// 20-word text at a time and 32 at once: how much a micro-batch can gain
// on this machine before HTTP (ns/op and cpu-ns/op are per text; the CPU
// time is what other load on the machine does not inflate).
//
//	GOMAXPROCS=1 go test ./serve -run '^$' -bench Forward -benchtime 64x
func BenchmarkForward(b *testing.B) {
	for _, arch := range []string{"transformer", "cnn"} {
		dir := b.TempDir()
		benchModel(b, filepath.Join(dir, "m"), arch)
		m, err := model.Load(filepath.Join(dir, "m"))
		if err != nil {
			b.Fatal(err)
		}
		in := texts(32, 1)
		for i := range in {
			in[i] = strings.Join(slices.Repeat(strings.Fields(in[i]), 20)[:20], " ")
		}
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/batch=%d", arch, batch), func(b *testing.B) {
				cpu0 := cpuTime()
				for i := 0; i < b.N; i += batch {
					m.PredictTexts(in[:batch])
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
