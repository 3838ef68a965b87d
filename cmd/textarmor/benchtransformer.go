package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/optim"
	"github.com/textarmor/textarmor/tensor"
)

// runBenchTransformer times a MiniLM-shaped encoder (random weights: the
// work does not depend on them): forward passes at batch 1 and 32 and a
// fine-tuning step at batch 32, all at length 64, against the GEMM peak of
// the same run.
func runBenchTransformer(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench transformer", "bench transformer [--blas NAME] [--time 3s] [--json]", stderr)
	var blasName string
	var asJSON bool
	var minTime time.Duration
	var length int
	fs.StringVar(&blasName, "blas", "", "BLAS backend: "+fmt.Sprint(tensor.Backends())+" (default "+tensor.BackendName()+")")
	fs.BoolVar(&asJSON, "json", false, "print the rows as JSON")
	fs.DurationVar(&minTime, "time", 3*time.Second, "minimum time spent on each measurement")
	fs.IntVar(&length, "len", 64, "sequence length in word pieces")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	if minTime <= 0 || length < 2 || length > 512 {
		return usageError{fmt.Errorf("--time %v must be positive and --len %d in [2, 512]", minTime, length)}
	}
	peak := gemmPeak(minTime)
	rows := []benchRow{{Name: "sgemm 1024³", Seconds: 2 * 1024 * 1024 * 1024 / peak / 1e9, GFLOPs: peak, PeakPct: 100}}
	m, err := nn.New(nn.MiniLMConfig(2), rand.New(rand.NewSource(1)))
	if err != nil {
		return err
	}
	for _, b := range []int{1, 32} {
		fwd := benchBatch(b, length, m.Cfg.VocabSize)
		seqs := make([][]int32, b)
		for i := range seqs {
			seqs[i] = fwd.IDs[i*length : (i+1)*length]
		}
		s := timeIt(minTime, func() { m.Predict(seqs) })
		f := m.ForwardFLOPs(b, length) / s / 1e9
		rows = append(rows, benchRow{Name: fmt.Sprintf("MiniLM-L6 forward (batch %d, len %d)", b, length), Seconds: s, GFLOPs: f,
			PeakPct: 100 * f / peak, Through: float64(b) / s, ThruUnit: "sentences/s"})
	}
	batch := benchBatch(32, length, m.Cfg.VocabSize)
	params := m.Params()
	opz := optim.NewAdam(optim.AdamConfig{LR: 2e-5, WeightDecay: 0.01, Decoupled: true, NoDecay: optim.NoDecayBERT})
	tp := ag.NewTape()
	tp.Train = true
	s := timeIt(minTime, func() {
		tp.Reset()
		tp.Backward(tp.CrossEntropy(m.Forward(tp, batch), batch.Labels, nil))
		optim.ClipGradNorm(params, 1)
		opz.Step(params)
		optim.ZeroGrad(params)
	})
	f := m.TrainFLOPs(32, length) / s / 1e9
	rows = append(rows, benchRow{Name: fmt.Sprintf("MiniLM-L6 train step (batch 32, len %d, AdamW)", length), Seconds: s, GFLOPs: f,
		PeakPct: 100 * f / peak, Through: 32 / s, ThruUnit: "sentences/s"})
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"blas": tensor.BackendDetail(), "cores": runtime.GOMAXPROCS(0), "rows": rows})
	}
	return printBenchRows(stdout, rows)
}
