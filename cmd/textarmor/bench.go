package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/optim"
	"github.com/textarmor/textarmor/tensor"
)

type benchRow struct {
	Name     string  `json:"name"`
	Seconds  float64 `json:"seconds"`
	GFLOPs   float64 `json:"gflop_per_s"`
	PeakPct  float64 `json:"pct_of_gemm_peak"`
	Through  float64 `json:"throughput,omitempty"`
	ThruUnit string  `json:"throughput_unit,omitempty"`
}

// timeIt runs f until at least minTime has passed (and at least 3 times)
// and returns the fastest run: the steady-state cost on a shared machine.
func timeIt(minTime time.Duration, f func()) float64 {
	f() // warm up
	best := time.Duration(1 << 62)
	start := time.Now()
	for n := 0; n < 3 || time.Since(start) < minTime; n++ {
		t0 := time.Now()
		f()
		best = min(best, time.Since(t0))
	}
	return best.Seconds()
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "defenses":
			return runBenchDefenses(args[1:], stdout, stderr)
		case "ftml-table":
			return runBenchFTMLTable(args[1:], stdout, stderr)
		case "flat-table":
			return runBenchFLATTable(args[1:], stdout, stderr)
		case "paired":
			return runBenchPaired(args[1:], stdout, stderr)
		case "transformer":
			return runBenchTransformer(args[1:], stdout, stderr)
		}
		if !strings.HasPrefix(args[0], "-") {
			return usageError{fmt.Errorf("bench %q: valid are defenses, ftml-table, flat-table, paired, transformer, or flags for the GEMM and model speed table", args[0])}
		}
	}
	fs := newFlags("bench", "bench [defenses|ftml-table|flat-table|paired|transformer] [flags]", stderr)
	var blasName string
	var asJSON bool
	var minTime time.Duration
	fs.StringVar(&blasName, "blas", "", "BLAS backend: "+fmt.Sprint(tensor.Backends())+" (default "+tensor.BackendName()+")")
	fs.BoolVar(&asJSON, "json", false, "print the rows as JSON")
	fs.DurationVar(&minTime, "time", 3*time.Second, "minimum time spent on each measurement")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkNumbers(numRule{minTime > 0, "time", minTime, "a positive duration"}); err != nil {
		return err
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	peak := gemmPeak(minTime)
	rows := []benchRow{{Name: "sgemm 1024³", Seconds: 2 * 1024 * 1024 * 1024 / peak / 1e9, GFLOPs: peak, PeakPct: 100}}
	for _, arch := range []string{"cnn", "bilstm"} {
		cfg := nn.DefaultConfig(arch)
		cfg.VocabSize = 15000
		m, err := nn.New(cfg, rand.New(rand.NewSource(1)))
		if err != nil {
			return err
		}
		batch := benchBatch(64, 50, cfg.VocabSize)
		params := m.Params()
		opz := optim.NewAdam(optim.AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
		tp := ag.NewTape()
		tp.Train = true
		s := timeIt(minTime, func() {
			tp.Reset()
			tp.Backward(tp.CrossEntropy(m.Forward(tp, batch), batch.Labels, nil))
			opz.Step(params)
			optim.ZeroGrad(params)
		})
		f := m.TrainFLOPs(64, 50) / s / 1e9
		rows = append(rows, benchRow{Name: arch + " train step (batch 64, len 50, emb 300, vocab 15k)", Seconds: s, GFLOPs: f,
			PeakPct: 100 * f / peak, Through: 64 / s, ThruUnit: "sentences/s"})
		fwd := benchBatch(nn.PredictBatch, 50, cfg.VocabSize)
		seqs := make([][]int32, fwd.B)
		for i := range seqs {
			seqs[i] = fwd.IDs[i*50 : (i+1)*50]
		}
		s = timeIt(minTime, func() { m.Predict(seqs) })
		f = m.ForwardFLOPs(fwd.B, 50) / s / 1e9
		rows = append(rows, benchRow{Name: arch + " forward (batch 256, len 50)", Seconds: s, GFLOPs: f,
			PeakPct: 100 * f / peak, Through: float64(fwd.B) / s, ThruUnit: "sentences/s"})
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"blas": tensor.BackendDetail(), "cores": runtime.GOMAXPROCS(0), "rows": rows})
	}
	return printBenchRows(stdout, rows)
}

// gemmPeak is the GFLOP/s of a 1024³ SGEMM: the ceiling every other row is
// compared with.
func gemmPeak(minTime time.Duration) float64 {
	const n = 1024
	r := rand.New(rand.NewSource(1))
	a, b, c := randVec(r, n*n), randVec(r, n*n), make([]float32, n*n)
	s := timeIt(minTime, func() { tensor.Gemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n) })
	return 2 * n * n * n / s / 1e9
}

// printBenchRows prints a speed table.
func printBenchRows(stdout io.Writer, rows []benchRow) error {
	fmt.Fprintf(stdout, "BLAS %s, %d cores; fastest of repeated runs\n\n", tensor.BackendDetail(), runtime.GOMAXPROCS(0))
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\ttime\tGFLOP/s\t% of GEMM peak\tthroughput")
	for _, row := range rows {
		thru := ""
		if row.Through > 0 {
			thru = fmt.Sprintf("%.0f %s", row.Through, row.ThruUnit)
		}
		fmt.Fprintf(tw, "%s\t%.4f s\t%.1f\t%.0f%%\t%s\n", row.Name, row.Seconds, row.GFLOPs, row.PeakPct, thru)
	}
	return tw.Flush()
}

func randVec(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func benchBatch(b, l, vocab int) *nn.Batch {
	r := rand.New(rand.NewSource(2))
	seqs := make([][]int32, b)
	labels := make([]int, b)
	for i := range seqs {
		seqs[i] = make([]int32, l)
		for j := range seqs[i] {
			seqs[i][j] = int32(2 + r.Intn(vocab-2))
		}
		labels[i] = r.Intn(2)
	}
	return nn.MakeBatch(seqs, labels, 1)
}
