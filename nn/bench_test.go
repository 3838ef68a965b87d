package nn

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
)

// benchModel is the benchmark shape: vocabulary 15,000, embedding
// 300, Kim CNN with 3×100 filters or a BiLSTM with 150 units per direction.
func benchModel(b *testing.B, arch string) *Classifier {
	var cfg Config
	if arch == "flat-lstm" {
		// FLAT's LSTM (spec flat.md §5): 300 units, tanh around the max
		// pooling, and the word mask.
		cfg = DefaultConfig("lstm")
		cfg.Hidden, cfg.Tanh, cfg.Mask = 300, true, true
	} else {
		cfg = DefaultConfig(arch)
	}
	cfg.VocabSize = 15000
	m, err := New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func fixedBatch(n, l, vocab int) *Batch {
	r := rand.New(rand.NewSource(2))
	seqs := make([][]int32, n)
	labels := make([]int, n)
	for i := range seqs {
		seqs[i] = make([]int32, l)
		for j := range seqs[i] {
			seqs[i][j] = int32(2 + r.Intn(vocab-2))
		}
		labels[i] = r.Intn(2)
	}
	return MakeBatch(seqs, labels, 1)
}

// benchTrainStep measures forward + backward + gradient reset for a batch
// of 64 sequences of length l (the optimizer step is in train's benchmark).
func benchTrainStep(b *testing.B, arch string, l int) {
	m := benchModel(b, arch)
	runTrainSteps(b, m, fixedBatch(64, l, 15000))
	b.ReportMetric(m.TrainFLOPs(64, l)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
}

// runTrainSteps times b.N forward + backward passes and gradient resets.
func runTrainSteps(b *testing.B, m *Classifier, batch *Batch) {
	tp := ag.NewTape()
	tp.Train = true
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tp.Reset()
		tp.Backward(tp.CrossEntropy(m.Forward(tp, batch), batch.Labels, nil))
		for _, p := range m.Params() {
			p.ZeroGrad()
		}
	}
}

func BenchmarkTrainStepCNN(b *testing.B)    { benchTrainStep(b, "cnn", 50) }
func BenchmarkTrainStepBiLSTM(b *testing.B) { benchTrainStep(b, "bilstm", 50) }

// BenchmarkTrainStepBiLSTMRagged is a batch shaped like IMDB's under the
// FTML preprocessing: 64 reviews of 20 to 512 tokens, padded to the
// longest, so about half of the [64, 512] cells are padding.
func BenchmarkTrainStepBiLSTMRagged(b *testing.B) {
	m := benchModel(b, "bilstm")
	r := rand.New(rand.NewSource(3))
	seqs := make([][]int32, 64)
	labels := make([]int, len(seqs))
	cells := 0
	for i := range seqs {
		n := 20 + r.Intn(493)
		if i == 0 {
			n = 512
		}
		seqs[i] = make([]int32, n)
		for j := range seqs[i] {
			seqs[i][j] = int32(2 + r.Intn(15000-2))
		}
		labels[i], cells = r.Intn(2), cells+n
	}
	runTrainSteps(b, m, MakeBatch(seqs, labels, 1))
	b.ReportMetric(float64(cells)/float64(64*512), "real_share")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
}

// IMDB length (the FLAT preset's 250 tokens).
func BenchmarkTrainStepCNN250(b *testing.B) { benchTrainStep(b, "cnn", 250) }

func benchForward(b *testing.B, arch string) {
	m := benchModel(b, arch)
	batch := fixedBatch(PredictBatch, 50, 15000)
	seqs := make([][]int32, batch.B)
	for i := range seqs {
		seqs[i] = batch.IDs[i*50 : (i+1)*50]
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Predict(seqs)
	}
	b.ReportMetric(float64(batch.B*b.N)/b.Elapsed().Seconds(), "sent/s")
	b.ReportMetric(m.ForwardFLOPs(batch.B, 50)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkForwardCNN(b *testing.B)    { benchForward(b, "cnn") }
func BenchmarkForwardBiLSTM(b *testing.B) { benchForward(b, "bilstm") }

// miniLM is all-MiniLM-L6-v2's shape (6 layers, width 384, 12 heads,
// feed-forward 1,536, vocabulary 30,522) with random weights and a 2-class
// head.
func miniLM(b *testing.B) *Classifier {
	m, err := New(MiniLMConfig(2), rand.New(rand.NewSource(1)))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchTransformerForward: batch n of length 64, the workload.
func benchTransformerForward(b *testing.B, n int) {
	m := miniLM(b)
	batch := fixedBatch(n, 64, 30522)
	seqs := make([][]int32, n)
	for i := range seqs {
		seqs[i] = batch.IDs[i*64 : (i+1)*64]
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Predict(seqs)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sent/s")
	b.ReportMetric(m.ForwardFLOPs(n, 64)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkForwardTransformerB1(b *testing.B)  { benchTransformerForward(b, 1) }
func BenchmarkForwardTransformerB32(b *testing.B) { benchTransformerForward(b, 32) }

// BenchmarkTrainStepTransformer: forward and backward of a MiniLM-shaped
// encoder on 32 sequences of 64 pieces.
func BenchmarkTrainStepTransformer(b *testing.B) {
	m := miniLM(b)
	runTrainSteps(b, m, fixedBatch(32, 64, 30522))
	b.ReportMetric(m.TrainFLOPs(32, 64)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
}
