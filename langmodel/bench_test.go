package langmodel

import (
	"sync"
	"testing"
)

var benchModel struct {
	once sync.Once
	m    *Model
	held [][]string
}

// benchSetup trains a trigram model on ~1M generated tokens (20k word
// types) and draws held-out sentences to score.
func benchSetup(b *testing.B) (*Model, [][]string) {
	benchModel.once.Do(func() {
		g := newGrammar(11, 5000, 10000, 5000)
		corpus := g.corpus(160000)
		m, err := Train(corpus, Options{Label: "bench"})
		if err != nil {
			panic(err)
		}
		benchModel.m, benchModel.held = m, newGrammar(12, 5000, 10000, 5000).corpus(1000)
		b.Logf("%s: %d tokens, %d trigram types", m.Name(), tokenCount(corpus), len(m.keys))
	})
	return benchModel.m, benchModel.held
}

// BenchmarkLogProb scores one word in context: Order (3) probabilities.
func BenchmarkLogProb(b *testing.B) {
	m, held := benchSetup(b)
	var s float64
	n := 0
	for i := 0; b.Loop(); i++ {
		sent := held[i%len(held)]
		s += m.LogProb(sent, i%len(sent))
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*m.Order()), "ns/prob")
	if s == 0 {
		b.Fatal("no score")
	}
}

func BenchmarkTrain(b *testing.B) {
	corpus := newGrammar(11, 5000, 10000, 5000).corpus(160000)
	for b.Loop() {
		if _, err := Train(corpus, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
