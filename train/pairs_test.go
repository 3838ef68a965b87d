package train

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// samePairs is a generated pair task whose label depends on both texts:
// 1 when the two texts start with the same key word. Each key is equally
// likely on either side whatever the label, so one text alone says
// nothing about it (chance is 50 %).
func samePairs(n int, seed int64) []dataset.Example {
	rng := rand.New(rand.NewSource(seed))
	ex := make([]dataset.Example, n)
	for i := range ex {
		a, b := rng.Intn(6), rng.Intn(6)
		if i%2 == 0 {
			b = a
		} else if b == a {
			b = (a + 1 + rng.Intn(5)) % 6
		}
		l := 0
		if a == b {
			l = 1
		}
		ex[i] = dataset.Example{Text: fmt.Sprintf("k%d f%d f%d", a, rng.Intn(4), rng.Intn(4)), Text2: fmt.Sprintf("k%d f%d", b, rng.Intn(4)), Label: l}
	}
	return ex
}

// TestPairTaskLearnt: a tiny transformer that reads pairs learns the
// generated task through the whole training path (EncodePair, batches,
// Forward with the derived token types), the saved model still reads
// pairs, and its prediction follows either text's key word.
func TestPairTaskLearnt(t *testing.T) {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for i := 0; i < 6; i++ {
		vocab = append(vocab, fmt.Sprint("k", i))
	}
	for i := 0; i < 4; i++ {
		vocab = append(vocab, fmt.Sprint("f", i))
	}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions, tc.HiddenDropout, tc.AttnDropout = 2, 32, 16, 0, 0
	cfg.Transformer, cfg.EmbedDim, cfg.Dropout = &tc, 16, 0
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 16, Classes: []string{"different", "same"}, Pieces: &opts},
		wp, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPairs(); err != nil {
		t.Fatal(err)
	}
	tr, dv := Encode(m, samePairs(1000, 1)), Encode(m, samePairs(200, 2))
	out := filepath.Join(t.TempDir(), "m")
	res, err := Run(m, Standard{}, tr, dv, Options{Epochs: 20, BatchSize: 16, Seed: 3, Optimizer: "adam", LR: 3e-3, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("best dev accuracy %.3f at epoch %d", res.BestDevAcc, res.BestEpoch)
	if res.BestDevAcc < 0.95 {
		t.Fatalf("dev accuracy %.3f on the pair task", res.BestDevAcc)
	}
	best, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !best.Pairs() {
		t.Fatal("the saved model does not read pairs")
	}
	if acc := Accuracy(best.Net, Encode(best, samePairs(200, 4))); acc < 0.95 {
		t.Errorf("test accuracy %.3f", acc)
	}
	p, err := best.PredictPairs([]string{"k2 f0 f1", "k2 f0 f1", "k3 f0 f1"}, []string{"k2 f3", "k5 f3", "k2 f3"})
	if err != nil {
		t.Fatal(err)
	}
	if p[0].Label != "same" || p[1].Label != "different" || p[2].Label != "different" {
		t.Errorf("predictions %s %s %s, want same different different", p[0].Label, p[1].Label, p[2].Label)
	}
}
