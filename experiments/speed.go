package experiments

import (
	"errors"
	"fmt"
	"math/rand"
	"time"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/lstmlm"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/optim"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// SpeedRow is one measurement of a speed table: the fastest of repeated
// runs, its GFLOP/s and their share of the same run's GEMM peak.
type SpeedRow struct {
	Name     string  `json:"name"`
	Seconds  float64 `json:"seconds"`
	GFLOPs   float64 `json:"gflop_per_s"`
	PeakPct  float64 `json:"pct_of_gemm_peak"`
	Through  float64 `json:"throughput,omitempty"`
	ThruUnit string  `json:"throughput_unit,omitempty"`
}

// SpeedOptions configure the speed tables.
type SpeedOptions struct {
	// MinTime is the least time spent on each measurement (which also runs
	// at least 3 times); the fastest run counts, the steady-state cost on
	// a shared machine.
	MinTime time.Duration
	// Len is SpeedTransformer's sequence length in word pieces, 2 to 512.
	Len int
}

// fastestRun runs f until at least minTime has passed (and at least 3
// times) after a warm-up run and returns the fastest run in seconds.
func fastestRun(minTime time.Duration, f func()) float64 {
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

// GEMMPeak is the GFLOP/s of a 1024³ SGEMM: the ceiling every other row is
// compared with.
func GEMMPeak(minTime time.Duration) float64 {
	const n = 1024
	r := rand.New(rand.NewSource(1))
	a, b, c := randomFloats(r, n*n), randomFloats(r, n*n), make([]float32, n*n)
	s := fastestRun(minTime, func() { tensor.Gemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n) })
	return 2 * n * n * n / s / 1e9
}

// gemmPeakRow measures the GEMM peak and returns it with its row.
func gemmPeakRow(minTime time.Duration) (float64, SpeedRow) {
	peak := GEMMPeak(minTime)
	return peak, SpeedRow{Name: "sgemm 1024³", Seconds: 2 * 1024 * 1024 * 1024 / peak / 1e9, GFLOPs: peak, PeakPct: 100}
}

// SpeedCNNBiLSTM is `textarmor bench`'s table: the GEMM peak, then a
// training step (batch 64, length 50, Adam) and a forward pass (batch
// nn.PredictBatch) of the default CNN and BiLSTM over a 15,000-word
// vocabulary, with random weights: the work does not depend on them.
func SpeedCNNBiLSTM(opt SpeedOptions) ([]SpeedRow, error) {
	if opt.MinTime <= 0 {
		return nil, errors.New("experiments: the minimum time must be positive")
	}
	peak, row := gemmPeakRow(opt.MinTime)
	rows := []SpeedRow{row}
	for _, arch := range []string{"cnn", "bilstm"} {
		cfg := nn.DefaultConfig(arch)
		cfg.VocabSize = 15000
		m, err := nn.New(cfg, rand.New(rand.NewSource(1)))
		if err != nil {
			return nil, err
		}
		batch := randomBatch(64, 50, cfg.VocabSize)
		params := m.Params()
		opz := optim.NewAdam(optim.AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
		tp := ag.NewTape()
		tp.Train = true
		s := fastestRun(opt.MinTime, func() {
			tp.Reset()
			tp.Backward(tp.CrossEntropy(m.Forward(tp, batch), batch.Labels, nil))
			opz.Step(params)
			optim.ZeroGrad(params)
		})
		f := m.TrainFLOPs(64, 50) / s / 1e9
		rows = append(rows, SpeedRow{Name: arch + " train step (batch 64, len 50, emb 300, vocab 15k)", Seconds: s, GFLOPs: f,
			PeakPct: 100 * f / peak, Through: 64 / s, ThruUnit: "sentences/s"})
		fwd := randomBatch(nn.PredictBatch, 50, cfg.VocabSize)
		seqs := batchRows(fwd, 50)
		s = fastestRun(opt.MinTime, func() { m.Predict(seqs) })
		f = m.ForwardFLOPs(fwd.B, 50) / s / 1e9
		rows = append(rows, SpeedRow{Name: arch + " forward (batch 256, len 50)", Seconds: s, GFLOPs: f,
			PeakPct: 100 * f / peak, Through: float64(fwd.B) / s, ThruUnit: "sentences/s"})
	}
	row, err := speedLSTMLM(opt.MinTime, peak)
	if err != nil {
		return nil, err
	}
	return append(rows, row), nil
}

// speedLSTMLM is SPGD's language model's training step at the scale of
// spgd.md §10: 32 streams × 35 words, 64-d embeddings, 256 units, a
// 10,000-word full softmax.
func speedLSTMLM(minTime time.Duration, peak float64) (SpeedRow, error) {
	words := make([]string, 0, 10000)
	words = append(words, text.PadWord, text.UnkWord)
	for i := len(words); i < 9999; i++ {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	vocab, err := text.NewVocab(append(words, lstmlm.EOS))
	if err != nil {
		return SpeedRow{}, err
	}
	m, err := lstmlm.New(lstmlm.DefaultConfig(), vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		return SpeedRow{}, err
	}
	step, flops := lstmlm.BenchStep(m, 32, 35, 1)
	s := fastestRun(minTime, step)
	f := flops / s / 1e9
	return SpeedRow{Name: "lstm-lm train step (32×35 words, emb 64, 256 units, vocab 10k)", Seconds: s, GFLOPs: f,
		PeakPct: 100 * f / peak, Through: 32 * 35 / s, ThruUnit: "words/s"}, nil
}

// SpeedTransformer is `textarmor bench transformer`'s table: the GEMM
// peak, then forward passes of a MiniLM-shaped encoder (random weights) at
// batch 1 and 32 and a fine-tuning step (AdamW, clipped) at batch 32, all
// at length opt.Len.
func SpeedTransformer(opt SpeedOptions) ([]SpeedRow, error) {
	length := opt.Len
	if opt.MinTime <= 0 || length < 2 || length > 512 {
		return nil, fmt.Errorf("experiments: minimum time %v must be positive and length %d in [2, 512]", opt.MinTime, length)
	}
	peak, row := gemmPeakRow(opt.MinTime)
	rows := []SpeedRow{row}
	m, err := nn.New(nn.MiniLMConfig(2), rand.New(rand.NewSource(1)))
	if err != nil {
		return nil, err
	}
	for _, b := range []int{1, 32} {
		seqs := batchRows(randomBatch(b, length, m.Cfg.VocabSize), length)
		s := fastestRun(opt.MinTime, func() { m.Predict(seqs) })
		f := m.ForwardFLOPs(b, length) / s / 1e9
		rows = append(rows, SpeedRow{Name: fmt.Sprintf("MiniLM-L6 forward (batch %d, len %d)", b, length), Seconds: s, GFLOPs: f,
			PeakPct: 100 * f / peak, Through: float64(b) / s, ThruUnit: "sentences/s"})
	}
	batch := randomBatch(32, length, m.Cfg.VocabSize)
	params := m.Params()
	opz := optim.NewAdam(optim.AdamConfig{LR: 2e-5, WeightDecay: 0.01, Decoupled: true, NoDecay: optim.NoDecayBERT})
	tp := ag.NewTape()
	tp.Train = true
	s := fastestRun(opt.MinTime, func() {
		tp.Reset()
		tp.Backward(tp.CrossEntropy(m.Forward(tp, batch), batch.Labels, nil))
		optim.ClipGradNorm(params, 1)
		opz.Step(params)
		optim.ZeroGrad(params)
	})
	f := m.TrainFLOPs(32, length) / s / 1e9
	rows = append(rows, SpeedRow{Name: fmt.Sprintf("MiniLM-L6 train step (batch 32, len %d, AdamW)", length), Seconds: s, GFLOPs: f,
		PeakPct: 100 * f / peak, Through: 32 / s, ThruUnit: "sentences/s"})
	return rows, nil
}

func randomFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// randomBatch is b random sequences of length l over a vocabulary (ids 2
// and up) with random binary labels, always the same (seed 2).
func randomBatch(b, l, vocab int) *nn.Batch {
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

// batchRows splits a batch's ids back into its sequences of length l.
func batchRows(b *nn.Batch, l int) [][]int32 {
	seqs := make([][]int32, b.B)
	for i := range seqs {
		seqs[i] = b.IDs[i*l : (i+1)*l]
	}
	return seqs
}
