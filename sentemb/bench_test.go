package sentemb

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

// miniLMShaped is a random encoder of all-MiniLM-L6-v2's shape (6 layers,
// width 384, 12 heads, FFN 1536) over 30,522 ids, and a batch of 16
// sentences of 32 pieces: the training step the spec's cost model (K + 3
// passes for RobustEmbed, 2 for SimCSE) is about.
func miniLMShaped(b *testing.B) (*nn.Classifier, *nn.Batch) {
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Heads, tc.Intermediate, tc.MaxPositions, tc.Pool = 6, 12, 1536, 512, "mean"
	cfg.Transformer, cfg.EmbedDim, cfg.VocabSize, cfg.NumClasses, cfg.Dropout = &tc, 384, 30522, 2, 0.1
	net, err := nn.New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	seqs := make([][]int32, 16)
	for i := range seqs {
		seqs[i] = make([]int32, 32)
		for j := range seqs[i] {
			seqs[i][j] = int32(1000 + r.Intn(20000))
		}
	}
	return net, nn.MakeBatch(seqs, nil, 0)
}

func benchStep(b *testing.B, obj train.Objective) {
	net, batch := miniLMShaped(b)
	tp := ag.NewTape()
	tp.Train = true
	tp.Rng = rand.New(rand.NewSource(3))
	b.ResetTimer()
	for range b.N {
		tp.Reset()
		out, err := obj.Loss(tp, net, batch)
		if err != nil {
			b.Fatal(err)
		}
		tp.Backward(out.Loss)
		for _, p := range net.Params() {
			p.ZeroGrad()
		}
	}
}

// The bound: a RobustEmbed step costs at most (K + 3)/2 = 4
// SimCSE steps at K = T = 5.
func BenchmarkSimCSEStep(b *testing.B) { benchStep(b, &SimCSE{Tau: DefaultTau}) }

func BenchmarkRobustEmbedStep(b *testing.B) {
	r, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, r)
}
