package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestSoak serves a model under concurrent load with micro-batching
// for TEXTARMOR_SERVE_SOAK seconds (the 5 minutes: 300) in ten
// segments and fails if memory grows: after a garbage collection, the
// heap in use and the goroutine count at the end must be those after the
// first segment (the warm-up), within 8 MiB and 16 goroutines. The
// process's resident set (Linux) is printed too; the Go runtime returns
// freed pages lazily, so it is reported, not judged.
//
//	TEXTARMOR_SERVE_SOAK=300 GOMAXPROCS=1 go test ./serve -run TestSoak -v -timeout 20m
//
// TEXTARMOR_SERVE_LOAD_ARCH picks the model as for TestLoadTable (default
// here cnn: its passes are cheap, so five minutes send the most requests);
// TEXTARMOR_SERVE_SOAK_CONC the concurrency (default 64; a transformer on
// a busy core needs fewer clients for every request to meet its deadline).
func TestSoak(t *testing.T) {
	s := os.Getenv("TEXTARMOR_SERVE_SOAK")
	if s == "" {
		t.Skip("set TEXTARMOR_SERVE_SOAK=SECONDS to run the soak test (it loads the CPU)")
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || secs < 10 || secs > 3600 {
		t.Fatalf("TEXTARMOR_SERVE_SOAK %q: want seconds in [10, 3600]", s)
	}
	arch := cmpOr(os.Getenv("TEXTARMOR_SERVE_LOAD_ARCH"), "cnn")
	conc, err := strconv.Atoi(cmpOr(os.Getenv("TEXTARMOR_SERVE_SOAK_CONC"), "64"))
	if err != nil || conc < 1 || conc > 1024 {
		t.Fatalf("TEXTARMOR_SERVE_SOAK_CONC %q: want clients in [1, 1024]", os.Getenv("TEXTARMOR_SERVE_SOAK_CONC"))
	}
	dir := t.TempDir()
	benchModel(t, filepath.Join(dir, "m"), arch)
	cfg := NewConfig()
	cfg.Models = []string{filepath.Join(dir, "m")}
	cfg.MaxBatch, cfg.MaxWait, cfg.Timeout = 32, 5*time.Millisecond, time.Minute
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.Close(); srv.Close() }()
	// Requests of 1 to 8 texts of 5 to 60 words: batches of every size.
	rng := rand.New(rand.NewSource(7))
	w := lexWords()
	var targets []vegeta.Target
	for range 256 {
		var texts []string
		for range 1 + rng.Intn(8) {
			words := make([]string, 5+rng.Intn(56))
			for i := range words {
				words[i] = w[rng.Intn(len(w))]
			}
			texts = append(texts, strings.Join(words, " "))
		}
		body, _ := json.Marshal(PredictRequest{Texts: texts})
		targets = append(targets, vegeta.Target{Method: "POST", URL: ts.URL + "/v1/predict", Body: body, Header: http.Header{"Content-Type": {"application/json"}}})
	}
	// One client (and its pool of connections) across the segments, as
	// a long-running client would keep it; idle connections closed before
	// each count.
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}
	client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	segment := time.Duration(secs / 10 * float64(time.Second))
	type sample struct {
		heap, rss  uint64
		goroutines int
		requests   uint64
		codes      map[string]int
	}
	measure := func() sample {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return sample{heap: ms.HeapInuse, rss: residentBytes(), goroutines: runtime.NumGoroutine()}
	}
	fmt.Printf("soak: model %s, %s in 10 segments, concurrency %d, micro-batching (32, 5 ms), GOMAXPROCS %d\n", arch, time.Duration(secs*float64(time.Second)), conc, runtime.GOMAXPROCS(0))
	fmt.Printf("%8s %10s %12s %12s %10s  %s\n", "segment", "requests", "heap in use", "resident", "goroutines", "status codes")
	before := measure()
	fmt.Printf("%8s %10s %12s %12s %10d\n", "start", "", mib(before.heap), mib(before.rss), before.goroutines)
	var samples []sample
	for k := range 10 {
		// A fresh attacker per segment: one that has stopped stays stopped.
		atk := vegeta.NewAttacker(vegeta.Workers(uint64(conc)), vegeta.MaxWorkers(uint64(conc)), vegeta.Client(client))
		var m vegeta.Metrics
		for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{}, segment, fmt.Sprint("soak", k)) {
			m.Add(res)
		}
		m.Close()
		// Let closed connections' goroutines finish before counting.
		tr.CloseIdleConnections()
		time.Sleep(200 * time.Millisecond)
		smp := measure()
		smp.requests, smp.codes = m.Requests, m.StatusCodes
		samples = append(samples, smp)
		fmt.Printf("%8d %10d %12s %12s %10d  %v\n", k+1, smp.requests, mib(smp.heap), mib(smp.rss), smp.goroutines, smp.codes)
		if smp.requests == 0 {
			t.Errorf("segment %d sent no requests", k+1)
		}
		for code := range smp.codes {
			if code != "200" {
				t.Errorf("segment %d: status %s below the queue bound", k+1, code)
			}
		}
	}
	warm, last := samples[0], samples[len(samples)-1]
	if last.heap > warm.heap+8<<20 {
		t.Errorf("heap in use grew from %s after the warm-up to %s at the end", mib(warm.heap), mib(last.heap))
	}
	if last.goroutines > warm.goroutines+16 {
		t.Errorf("goroutines grew from %d after the warm-up to %d at the end", warm.goroutines, last.goroutines)
	}
}

// residentBytes is the process's resident set size (Linux; 0 elsewhere).
func residentBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
