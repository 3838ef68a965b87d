package explain

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/nn"
)

// benchModel is a CNN of the default size (300-d, widths 3,4,5 × 100) over
// a 15,000-word vocabulary, and one SST-2-length (19 tokens) sentence.
func benchModel(b *testing.B) (*nn.Classifier, []int32) {
	return benchModelOf(b, "cnn")
}

// benchModelOf is benchModel for any architecture (LSTM: hidden 300, the
// FLAT base model's size).
func benchModelOf(b *testing.B, arch string) (*nn.Classifier, []int32) {
	cfg := nn.DefaultConfig(arch)
	cfg.Hidden = 300
	cfg.VocabSize = 15000
	m, err := nn.New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int32, 19)
	for i := range ids {
		ids[i] = int32(2 + i*37)
	}
	return m, ids
}

func BenchmarkIG(b *testing.B) {
	m, ids := benchModel(b)
	for i := 0; i < b.N; i++ {
		if _, err := IG(m, ids, []int{1}, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIGLSTM is the interpretation metric's cost per text on the LSTM:
// both classes (one tape for two classes).
func BenchmarkIGLSTM(b *testing.B) {
	m, ids := benchModelOf(b, "lstm")
	for i := 0; i < b.N; i++ {
		if _, err := IG(m, ids, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLIME(b *testing.B) {
	m, ids := benchModel(b)
	for i := 0; i < b.N; i++ {
		if _, err := LIME(m, ids, []int{1}, LIMEOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
