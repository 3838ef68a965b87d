package wordvec

import (
	"fmt"
	"math/rand"
	"testing"
)

// zipfCorpus returns n tokens of Zipf-distributed words (s = 1.1 over a
// 20,000-word vocabulary, roughly the shape of English) in 25-word sentences.
func zipfCorpus(n int, seed int64) [][]string {
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.1, 2, 19999)
	names := make([]string, 20000)
	for i := range names {
		names[i] = fmt.Sprintf("w%d", i)
	}
	var out [][]string
	for n > 0 {
		s := make([]string, min(25, n))
		for j := range s {
			s[j] = names[z.Uint64()]
		}
		out = append(out, s)
		n -= len(s)
	}
	return out
}

// BenchmarkTrain measures training speed in words/second (training tokens
// read, as word2vec counts them) for one epoch over 300,000 Zipf tokens with
// the default options (300-d, window 5, 5 negatives, sample 1e-3).
//
//	go test -run '^$' -bench Train -benchtime 3x ./wordvec
func BenchmarkTrain(b *testing.B) {
	corpus := zipfCorpus(300_000, 1)
	for _, c := range []struct{ dim, workers int }{{300, 1}, {300, 2}, {100, 1}, {100, 2}} {
		b.Run(fmt.Sprintf("dim%d/workers%d", c.dim, c.workers), func(b *testing.B) {
			o := DefaultOptions()
			o.Dim, o.Workers, o.Epochs = c.dim, c.workers, 1
			var words int64
			var sec float64
			for b.Loop() {
				v, err := Train(corpus, o)
				if err != nil {
					b.Fatal(err)
				}
				words += v.Stats.Words
				sec += v.Stats.Seconds
			}
			b.ReportMetric(float64(words)/sec, "words/s")
		})
	}
}
