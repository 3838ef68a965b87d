package wordvec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/text"
)

// groupCorpus returns n sentences of 12 tokens. A sentence is about group A
// or group B (chosen at random): it alternates words of the group (a0..a9 or
// b0..b9) with words of the group's own context set (x0..x19 or y0..y19), so
// A words only ever share contexts with A words.
func groupCorpus(n int, seed int64) [][]string {
	r := rand.New(rand.NewSource(seed))
	out := make([][]string, n)
	for i := range out {
		g, c := "a", "x"
		if r.Intn(2) == 1 {
			g, c = "b", "y"
		}
		s := make([]string, 12)
		for j := range s {
			if j%2 == 0 {
				s[j] = fmt.Sprintf("%s%d", c, r.Intn(20))
			} else {
				s[j] = fmt.Sprintf("%s%d", g, r.Intn(10))
			}
		}
		out[i] = s
	}
	return out
}

func groupWords(g string) []string {
	w := make([]string, 10)
	for i := range w {
		w[i] = fmt.Sprintf("%s%d", g, i)
	}
	return w
}

func smallOptions(workers int) Options {
	o := DefaultOptions()
	o.Dim, o.MinCount, o.Workers = 16, 1, workers
	return o
}

// TestGroupsSeparate: words that share contexts end up closer (cosine) than
// words that never do.
func TestGroupsSeparate(t *testing.T) {
	corpus := groupCorpus(3000, 1)
	for _, tc := range []struct {
		workers int
		sample  float64
	}{{1, 1e-3}, {3, 1e-3}, {1, 0}} {
		t.Run(fmt.Sprintf("workers%d_sample%g", tc.workers, tc.sample), func(t *testing.T) {
			o := smallOptions(tc.workers)
			o.Sample = tc.sample
			v, err := Train(corpus, o)
			if err != nil {
				t.Fatal(err)
			}
			a, b := groupWords("a"), groupWords("b")
			var within, cross float64
			var nw, nc int
			for _, g := range [][]string{a, b} {
				for i, x := range g {
					for _, y := range g[i+1:] {
						c, _ := v.Similarity(x, y)
						within += c
						nw++
					}
				}
			}
			for _, x := range a {
				for _, y := range b {
					c, ok := v.Similarity(x, y)
					if !ok {
						t.Fatalf("%s or %s missing", x, y)
					}
					cross += c
					nc++
				}
			}
			within /= float64(nw)
			cross /= float64(nc)
			t.Logf("mean cosine within groups %.3f, across %.3f", within, cross)
			if within-cross < 0.4 {
				t.Errorf("within-group cosine %.3f is not clearly above cross-group %.3f", within, cross)
			}
			// Every group word's nearest group word is from its own group.
			for _, g := range [][]string{a, b} {
				for _, x := range g {
					for _, nb := range v.Nearest(x, len(v.Words)) {
						if c := nb.Word[0]; c == 'a' || c == 'b' {
							if c != x[0] {
								t.Errorf("nearest group word of %s is %s (%.3f)", x, nb.Word, nb.Cos)
							}
							break
						}
					}
				}
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	corpus := groupCorpus(600, 2)
	for _, workers := range []int{1, 3} {
		o := smallOptions(workers)
		v1, err := Train(corpus, o)
		if err != nil {
			t.Fatal(err)
		}
		// Another scheduling: one OS thread, so goroutines interleave
		// differently; the vectors must not change.
		prev := runtime.GOMAXPROCS(1)
		v2, err := Train(corpus, o)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(v1.Data, v2.Data) {
			t.Errorf("workers %d: same seed, different vectors", workers)
		}
		o.Seed = 2
		v3, err := Train(corpus, o)
		if err != nil {
			t.Fatal(err)
		}
		if sameBits(v1.Data, v3.Data) {
			t.Errorf("workers %d: seeds 1 and 2 gave identical vectors", workers)
		}
		if v1.Stats.Kept == 0 || v1.Stats.Kept == v1.Stats.Words {
			t.Errorf("workers %d: kept %d of %d words: subsampling did nothing", workers, v1.Stats.Kept, v1.Stats.Words)
		}
	}
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestWriteLoadVectors: the written file reads back through text.LoadVectors
// with every value bit-identical.
func TestWriteLoadVectors(t *testing.T) {
	o := smallOptions(2)
	o.Dim = 7
	v, err := Train(groupCorpus(200, 3), o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v.txt")
	var buf bytes.Buffer
	if err := v.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != fmt.Sprintf("%d 7", len(v.Words)) {
		t.Fatalf("header %q", first)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	vocab, err := text.NewVocab(append([]string{text.PadWord, text.UnkWord}, v.Words...))
	if err != nil {
		t.Fatal(err)
	}
	got, err := text.LoadVectors(path, vocab)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dim != 7 || got.NumFound != len(v.Words) {
		t.Fatalf("loaded dim %d, %d of %d words", got.Dim, got.NumFound, len(v.Words))
	}
	for i, w := range v.Words {
		if !sameBits(got.Row(vocab.ID(w)), v.Vector(w)) {
			t.Fatalf("row of %q: wrote %v, read %v", w, v.Vector(w), got.Row(int32(i+2)))
		}
	}
	bad := &Vectors{Dim: 1, Words: []string{"two words"}, Data: []float32{1}}
	if err := bad.Write(&buf); err == nil {
		t.Error("a word with a space was written")
	}
}

// TestMinCountAndOrder: words below the minimum count are absent, the rest
// are sorted by count then bytes, and the counts are right.
func TestMinCountAndOrder(t *testing.T) {
	corpus := [][]string{
		{"a", "b", "c", "d", "a", "", "e"},
		{"a", "b", "c", "d", "a"},
		{"c"},
		{"b", "d", "a", "c", "b", "d"},
		{"e", "e"},
	}
	o := smallOptions(1)
	o.MinCount = 4
	v, err := Train(corpus, o)
	if err != nil {
		t.Fatal(err)
	}
	// counts: a 5, b 4, c 4, d 4, e 3
	if want := []string{"a", "b", "c", "d"}; strings.Join(v.Words, " ") != strings.Join(want, " ") {
		t.Errorf("words %v, want %v", v.Words, want)
	}
	if fmt.Sprint(v.Counts) != "[5 4 4 4]" {
		t.Errorf("counts %v", v.Counts)
	}
	if v.Index("e") != -1 || v.Vector("e") != nil || v.Nearest("e", 3) != nil {
		t.Error("e (count 3 < min count 4) has a vector")
	}
	if st := v.Stats; st.CorpusTokens != 20 || st.TrainTokens != 17 || st.Words != 17*int64(o.Epochs) || st.Sentences != 5 {
		t.Errorf("stats %+v", st)
	}
	if len(v.Data) != 4*o.Dim {
		t.Errorf("%d values for 4 words of dim %d", len(v.Data), o.Dim)
	}
	o.MinCount = 6
	if _, err := Train(corpus, o); err == nil || !strings.Contains(err.Error(), "at least 6") {
		t.Errorf("no word above min count: err %v", err)
	}
}

// TestSubsampling checks word2vec's keep probability and that training keeps
// about the expected number of words.
func TestSubsampling(t *testing.T) {
	for _, c := range []struct {
		count, total int64
		sample, want float64
	}{
		{1000, 1_000_000, 1e-3, 2},                          // (sqrt(1)+1)·1000/1000
		{10000, 1_000_000, 1e-3, (math.Sqrt(10) + 1) * 0.1}, // 0.416
		{500_000, 1_000_000, 1e-5, (math.Sqrt(50000) + 1) * 10 / 500_000},
	} {
		if got := keepProb(c.count, c.total, c.sample); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("keepProb(%d, %d, %g) = %v, want %v", c.count, c.total, c.sample, got, c.want)
		}
	}
	// "the" is half of the 20,000 tokens; 100 other words have 100 each.
	r := rand.New(rand.NewSource(4))
	var corpus [][]string
	for i := 0; i < 1000; i++ {
		s := make([]string, 0, 20)
		for j := 0; j < 10; j++ {
			s = append(s, "the", fmt.Sprintf("w%d", (i*10+j)%100))
		}
		r.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
		corpus = append(corpus, s)
	}
	o := smallOptions(2)
	o.Dim, o.Epochs = 4, 2
	v, err := Train(corpus, o)
	if err != nil {
		t.Fatal(err)
	}
	const total = 20000
	want := 2 * (10000*keepProb(10000, total, 1e-3) + 10000*keepProb(100, total, 1e-3))
	if got := float64(v.Stats.Kept); math.Abs(got-want) > 0.03*want {
		t.Errorf("kept %v words, want about %.0f", got, want)
	}
	o.Sample = 0
	if v, err = Train(corpus, o); err != nil {
		t.Fatal(err)
	}
	if v.Stats.Kept != 2*total || v.Stats.Words != 2*total {
		t.Errorf("sample 0: kept %d of %d, want all %d", v.Stats.Kept, v.Stats.Words, 2*total)
	}
}

func TestLearningRateSchedule(t *testing.T) {
	tr := &trainer{opt: Options{Alpha: 0.025, Epochs: 5}, total: 1000}
	if a := tr.alpha(0); a != 0.025 {
		t.Errorf("alpha at start %v", a)
	}
	if a, want := tr.alpha(2500), float32(0.025*(1-2500.0/5001)); a != want {
		t.Errorf("alpha halfway %v, want %v", a, want)
	}
	if a, want := tr.alpha(5000), float32(0.025/5001.0); a != want {
		t.Errorf("alpha at the end %v, want %v", a, want)
	}
	if a, want := tr.alpha(5001), float32(0.025*1e-4); a != want {
		t.Errorf("alpha past the end %v, want the floor %v", a, want)
	}
}

func TestAliasTable(t *testing.T) {
	weights := []float64{8, 1, 0.5, 4, 2.5, 0.01}
	tab := newAliasTable(weights)
	r := newRNG(1, 0)
	const n = 400000
	hits := make([]int, len(weights))
	for i := 0; i < n; i++ {
		hits[tab.sample(r.next())]++
	}
	var sum float64
	for _, w := range weights {
		sum += w
	}
	for i, w := range weights {
		p := w / sum
		if got := float64(hits[i]) / n; math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/n)+1e-4 {
			t.Errorf("id %d drawn %.4f of the time, want %.4f", i, got, p)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	corpus := groupCorpus(10, 1)
	for _, c := range []struct {
		name string
		mod  func(*Options)
	}{
		{"dim", func(o *Options) { o.Dim = 0 }},
		{"window", func(o *Options) { o.Window = 0 }},
		{"negative", func(o *Options) { o.Negative = 0 }},
		{"min count", func(o *Options) { o.MinCount = 0 }},
		{"epochs", func(o *Options) { o.Epochs = 0 }},
		{"workers", func(o *Options) { o.Workers = 0 }},
		{"sample", func(o *Options) { o.Sample = -1 }},
		{"sample", func(o *Options) { o.Sample = math.NaN() }},
		{"learning rate", func(o *Options) { o.Alpha = 0 }},
	} {
		o := smallOptions(1)
		c.mod(&o)
		if _, err := Train(corpus, o); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: err %v", c.name, err)
		}
	}
	for _, empty := range [][][]string{nil, {{}, {""}}} {
		if _, err := Train(empty, smallOptions(1)); err == nil || !strings.Contains(err.Error(), "empty corpus") {
			t.Errorf("empty corpus: err %v", err)
		}
	}
}

// TestMoreWorkersThanSentences: empty shards are fine.
func TestMoreWorkersThanSentences(t *testing.T) {
	v, err := Train([][]string{{"a", "b", "a"}, {"b", "a"}}, smallOptions(8))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Words) != 2 || v.Stats.Words != 5*int64(v.Stats.Words/5) {
		t.Errorf("%v %+v", v.Words, v.Stats)
	}
}

func TestNearest(t *testing.T) {
	v := &Vectors{Dim: 2, Words: []string{"q", "same", "near", "far", "opposite"},
		Data: []float32{1, 0, 2, 0, 1, 0.2, 0, 1, -1, 0}}
	got := v.Nearest("q", 3)
	if len(got) != 3 || got[0].Word != "same" || got[1].Word != "near" || got[2].Word != "far" || math.Abs(got[0].Cos-1) > 1e-12 {
		t.Errorf("Nearest: %+v", got)
	}
	if n := v.Nearest("q", 10); len(n) != 4 || n[3].Word != "opposite" {
		t.Errorf("Nearest with k too large: %+v", n)
	}
}
