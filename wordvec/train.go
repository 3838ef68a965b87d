package wordvec

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/tensor"
)

// Options configures Train. Start from DefaultOptions: Train rejects
// out-of-range values instead of guessing what a zero meant.
type Options struct {
	// Dim is the vector size (word2vec -size; the tool's default is 100,
	// DefaultOptions uses the papers' 300).
	Dim int
	// Window is the largest distance between a centre word and a context
	// word. As in word2vec, every centre word draws b uniformly from
	// [0, Window) and uses the window Window-b.
	Window int
	// Negative is the number of negative samples per (word, context) pair,
	// drawn from the unigram distribution raised to 0.75.
	Negative int
	// MinCount drops words seen fewer than MinCount times before training
	// (word2vec -min-count; 1 keeps every word).
	MinCount int
	// Epochs is the number of passes over the corpus (word2vec -iter).
	Epochs int
	// Workers is the number of shards trained in parallel. The result
	// depends on this number (1 is the C tool's single-threaded algorithm)
	// but not on the machine or on scheduling.
	Workers int
	// Sample is the subsampling threshold t (word2vec -sample); 0 turns
	// subsampling off. A word of count c among T training tokens is kept
	// with probability (sqrt(c/(t·T)) + 1)·t·T/c (capped at 1).
	Sample float64
	// Alpha is the starting learning rate; it decays linearly to
	// Alpha·1e-4 over all epochs.
	Alpha float64
	// Seed drives every random choice (initial vectors, window shrinks,
	// subsampling, negatives).
	Seed int64
	// Progress, when not nil, is called after every epoch from the goroutine
	// that called Train.
	Progress func(Progress)
}

// Progress reports the state of training after an epoch.
type Progress struct {
	Epoch, Epochs int
	Words, Total  int64   // training words read so far, and in all epochs
	Alpha         float64 // the learning rate of the last round
	Seconds       float64 // since training started
}

// DefaultOptions returns the word2vec C tool's skip-gram defaults, with 300-d
// vectors and one worker.
func DefaultOptions() Options {
	return Options{Dim: 300, Window: 5, Negative: 5, MinCount: 5, Epochs: 5, Workers: 1,
		Sample: 1e-3, Alpha: 0.025, Seed: 1}
}

// Stats describes a training run.
type Stats struct {
	Sentences    int   // sentences given to Train
	CorpusTokens int64 // non-empty tokens given
	// TrainTokens is the number of tokens of vocabulary words (those with
	// count >= MinCount) in one pass.
	TrainTokens int64
	// Words is the number of training tokens read over all epochs
	// (TrainTokens·Epochs): the "words" of words/second, as in word2vec.
	Words int64
	// Kept is how many of Words survived subsampling and were trained on.
	Kept           int64
	Seconds        float64 // training time (vocabulary building excluded)
	WordsPerSecond float64
}

const (
	maxSentence  = 1000  // word2vec's MAX_SENTENCE_LENGTH: longer sentences are cut
	expTableSize = 1000  // word2vec's EXP_TABLE_SIZE
	maxExp       = 6     // word2vec's MAX_EXP
	syncWords    = 10000 // words per worker between learning-rate updates and merges
	maxWorkers   = 256
	// maxCells bounds vocabulary size × Dim (8 GiB per float32 table; there
	// are two).
	maxCells = 1 << 31
)

// expTable holds sigmoid(x) for x = (i/expTableSize·2 − 1)·maxExp, as in
// word2vec.
var expTable = func() (t [expTableSize]float32) {
	for i := range t {
		e := math.Exp((float64(i)/expTableSize*2 - 1) * maxExp)
		t[i] = float32(e / (e + 1))
	}
	return t
}()

// expScale maps f in (−maxExp, maxExp) to a table index. word2vec writes
// EXP_TABLE_SIZE / MAX_EXP / 2 in integer arithmetic (83, so it reads a
// slightly shifted sigmoid and never the last 4 entries); we use the exact
// ratio.
const expScale = float32(expTableSize) / (2 * maxExp)

// Train learns vectors for the words of sentences (already tokenised; empty
// tokens are ignored). Sentences are the unit of context: windows never cross
// them, and a sentence longer than 1000 kept words is cut, as in word2vec.
func Train(sentences [][]string, opt Options) (*Vectors, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	counts := make(map[string]int64)
	var corpus int64
	for _, s := range sentences {
		for _, w := range s {
			if w != "" {
				counts[w]++
				corpus++
			}
		}
	}
	if corpus == 0 {
		return nil, errors.New("wordvec: empty corpus (no tokens)")
	}
	words, wc := vocabulary(counts, int64(opt.MinCount))
	if len(words) == 0 {
		return nil, fmt.Errorf("wordvec: no word occurs at least %d times (min count) in the %d tokens (%d distinct words)",
			opt.MinCount, corpus, len(counts))
	}
	if int64(len(words))*int64(opt.Dim) > maxCells {
		return nil, fmt.Errorf("wordvec: %d words × %d dimensions is too large (over %d values per table); raise the min count or lower the dimension",
			len(words), opt.Dim, maxCells)
	}
	index := make(map[string]int32, len(words))
	for i, w := range words {
		index[w] = int32(i)
	}
	var total int64
	for _, c := range wc {
		total += c
	}
	ids := make([]int32, 0, total)
	starts := make([]int, 1, len(sentences)+1)
	for _, s := range sentences {
		n := len(ids)
		for _, w := range s {
			if id, ok := index[w]; ok {
				ids = append(ids, id)
			}
		}
		if len(ids) > n {
			starts = append(starts, len(ids))
		}
	}
	t := newTrainer(opt, ids, starts, wc)
	st := t.run()
	st.Sentences = len(sentences)
	st.CorpusTokens = corpus
	return &Vectors{Dim: opt.Dim, Words: words, Counts: wc, Data: t.in, Stats: st, index: index}, nil
}

// Validate reports the first out-of-range option.
func (o Options) Validate() error {
	switch {
	case o.Dim < 1:
		return fmt.Errorf("wordvec: dimension %d, want at least 1", o.Dim)
	case o.Window < 1:
		return fmt.Errorf("wordvec: window %d, want at least 1", o.Window)
	case o.Negative < 1:
		return fmt.Errorf("wordvec: %d negative samples, want at least 1", o.Negative)
	case o.MinCount < 1:
		return fmt.Errorf("wordvec: min count %d, want at least 1 (1 keeps every word)", o.MinCount)
	case o.Epochs < 1:
		return fmt.Errorf("wordvec: %d epochs, want at least 1", o.Epochs)
	case o.Workers < 1 || o.Workers > maxWorkers:
		return fmt.Errorf("wordvec: %d workers, want 1 to %d", o.Workers, maxWorkers)
	case !(o.Sample >= 0) || math.IsInf(o.Sample, 0):
		return fmt.Errorf("wordvec: sample %v, want >= 0 (0 = no subsampling)", o.Sample)
	case !(o.Alpha > 0) || math.IsInf(o.Alpha, 0):
		return fmt.Errorf("wordvec: learning rate %v, want > 0", o.Alpha)
	}
	return nil
}

// vocabulary returns the words with count >= minCount by descending count,
// ties in byte order, and their counts.
func vocabulary(counts map[string]int64, minCount int64) ([]string, []int64) {
	words := make([]string, 0, len(counts))
	for w, c := range counts {
		if c >= minCount {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		ci, cj := counts[words[i]], counts[words[j]]
		if ci != cj {
			return ci > cj
		}
		return words[i] < words[j]
	})
	wc := make([]int64, len(words))
	for i, w := range words {
		wc[i] = counts[w]
	}
	return words, wc
}

// keepProb is word2vec's subsampling keep probability of a word seen count
// times among total training tokens with threshold sample (may exceed 1,
// meaning always kept).
func keepProb(count, total int64, sample float64) float64 {
	if sample <= 0 {
		return math.Inf(1)
	}
	st := sample * float64(total)
	return (math.Sqrt(float64(count)/st) + 1) * st / float64(count)
}

// rng is splitmix64: fast, small, and good in every bit (word2vec's LCG is
// weak in its low bits, which the tool uses for window shrinks).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return seeded.Mix(r.s)
}

// newRNG returns stream number stream of seed.
func newRNG(seed int64, stream uint64) rng {
	r := rng{uint64(seed)}
	r.s = r.next() ^ (stream * 0xd1342543de82ef95)
	r.next()
	return r
}

// below returns a uniform integer in [0, n) from the high 32 bits of u.
func below(u uint64, n int) int { return int((u >> 32) * uint64(n) >> 32) }

// aliasTable samples ids from a fixed distribution in O(1) (Walker/Vose):
// id i with probability p[i] exactly, where word2vec fills a 1e8-entry table
// (400 MB) to approximate the same distribution.
type aliasTable struct {
	accept []uint32 // column i keeps i when the low 32 random bits are below accept[i]
	alias  []int32
}

func newAliasTable(weights []float64) aliasTable {
	n := len(weights)
	var sum float64
	for _, w := range weights {
		sum += w
	}
	p := make([]float64, n)
	small, large := make([]int32, 0, n), make([]int32, 0, n)
	for i, w := range weights {
		p[i] = w / sum * float64(n)
		if p[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	t := aliasTable{accept: make([]uint32, n), alias: make([]int32, n)}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.accept[s] = uint32(max(p[s], 0) * (1 << 32))
		t.alias[s] = l
		p[l] -= 1 - p[s]
		if p[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left has probability 1 up to rounding: always keep itself.
	for _, rest := range [][]int32{small, large} {
		for _, i := range rest {
			t.accept[i] = math.MaxUint32
			t.alias[i] = i
		}
	}
	return t
}

func (t *aliasTable) sample(u uint64) int32 {
	i := below(u, len(t.alias))
	if uint32(u) < t.accept[i] {
		return int32(i)
	}
	return t.alias[i]
}

// trainer holds the shared state of one Train call.
type trainer struct {
	opt     Options
	dim     int
	ids     []int32 // the corpus as vocabulary ids, sentences back to back
	starts  []int   // sentence i is ids[starts[i]:starts[i+1]]
	total   int64   // len(ids): training tokens per epoch
	keep    []float64
	noise   aliasTable
	in, out []float32 // syn0 (the vectors) and syn1neg, vocabulary × dim
}

func newTrainer(opt Options, ids []int32, starts []int, counts []int64) *trainer {
	v, d := len(counts), opt.Dim
	t := &trainer{opt: opt, dim: d, ids: ids, starts: starts, total: int64(len(ids)),
		keep: make([]float64, v), in: make([]float32, v*d), out: make([]float32, v*d)}
	weights := make([]float64, v)
	for i, c := range counts {
		t.keep[i] = keepProb(c, t.total, opt.Sample)
		weights[i] = math.Pow(float64(c), 0.75)
	}
	t.noise = newAliasTable(weights)
	r := newRNG(opt.Seed, 0)
	for i := range t.in {
		t.in[i] = (float32(r.next()>>40)/(1<<24) - 0.5) / float32(d)
	}
	return t
}

// alpha is the learning rate after done of the epochs·total words.
func (t *trainer) alpha(done int64) float32 {
	a := t.opt.Alpha * (1 - float64(done)/float64(int64(t.opt.Epochs)*t.total+1))
	if floor := t.opt.Alpha * 1e-4; a < floor {
		a = floor
	}
	return float32(a)
}

func (t *trainer) run() Stats {
	k := t.opt.Workers
	// Shard j holds the sentences starting in tokens [j·total/k, (j+1)·total/k).
	ws := make([]*worker, k)
	nsent := len(t.starts) - 1
	s := 0
	for j := range ws {
		lo := s
		bound := int((int64(j+1)*t.total + int64(k) - 1) / int64(k))
		for s < nsent && t.starts[s] < bound {
			s++
		}
		ws[j] = newWorker(t, j, lo, s, k > 1)
	}
	start := time.Now()
	var done, kept int64
	var last float32
	for e := 0; e < t.opt.Epochs; e++ {
		for _, w := range ws {
			w.rewind()
		}
		for {
			a := t.alpha(done)
			var read int64
			if k == 1 {
				read = ws[0].round(a)
			} else {
				read = t.parallelRound(ws, a)
			}
			if read == 0 {
				break
			}
			done += read
			last = a
		}
		if t.opt.Progress != nil {
			t.opt.Progress(Progress{Epoch: e + 1, Epochs: t.opt.Epochs, Words: done,
				Total: int64(t.opt.Epochs) * t.total, Alpha: float64(last), Seconds: time.Since(start).Seconds()})
		}
	}
	for _, w := range ws {
		kept += w.kept
	}
	sec := time.Since(start).Seconds()
	st := Stats{TrainTokens: t.total, Words: done, Kept: kept, Seconds: sec}
	if sec > 0 {
		st.WordsPerSecond = float64(done) / sec
	}
	return st
}

// parallelRound runs one round on every worker at once, then merges their
// private rows into the shared tables: each worker's change (its row minus
// the shared row, which nobody writes during the round) is added in worker
// order, so the sums do not depend on which goroutine finished first.
func (t *trainer) parallelRound(ws []*worker, a float32) int64 {
	var wg sync.WaitGroup
	read := make([]int64, len(ws))
	for j, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read[j] = w.round(a)
			w.in.toDelta(t.in, t.dim)
			w.out.toDelta(t.out, t.dim)
		}()
	}
	wg.Wait()
	var sum int64
	for _, r := range read {
		sum += r
	}
	// Apply: goroutine g owns the rows with id%len(ws) == g.
	for g := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, w := range ws {
				w.in.addTo(t.in, t.dim, g, len(ws))
				w.out.addTo(t.out, t.dim, g, len(ws))
			}
		}()
	}
	wg.Wait()
	for _, w := range ws {
		w.in.reset()
		w.out.reset()
	}
	return sum
}

// rowCache is a worker's private copy of the rows of one table it touched
// in the current round.
type rowCache struct {
	slot []int32   // vocabulary id → index into ids, or -1
	ids  []int32   // cached rows in first-touch order
	data []float32 // len(ids) rows of dim values
}

func newRowCache(v int) rowCache {
	c := rowCache{slot: make([]int32, v)}
	for i := range c.slot {
		c.slot[i] = -1
	}
	return c
}

// add copies row id of shared into the cache and returns its slot.
func (c *rowCache) add(id int32, shared []float32, dim int) int32 {
	s := int32(len(c.ids))
	c.slot[id] = s
	c.ids = append(c.ids, id)
	o := int(id) * dim
	c.data = append(c.data, shared[o:o+dim]...)
	return s
}

func (c *rowCache) toDelta(shared []float32, dim int) {
	for s, id := range c.ids {
		tensor.Axpy(-1, shared[int(id)*dim:(int(id)+1)*dim], c.data[s*dim:(s+1)*dim])
	}
}

func (c *rowCache) addTo(shared []float32, dim, part, parts int) {
	for s, id := range c.ids {
		if int(id)%parts != part {
			continue
		}
		tensor.Axpy(1, c.data[s*dim:(s+1)*dim], shared[int(id)*dim:(int(id)+1)*dim])
	}
}

func (c *rowCache) reset() {
	for _, id := range c.ids {
		c.slot[id] = -1
	}
	c.ids = c.ids[:0]
	c.data = c.data[:0]
}

// worker trains one shard of the corpus.
type worker struct {
	t          *trainer
	rng        rng
	first, end int // sentence range of the shard
	si, p      int // cursor: current sentence and token
	private    bool
	in, out    rowCache
	sen        []int32
	neu1e      []float32
	kept       int64
}

func newWorker(t *trainer, j, first, end int, private bool) *worker {
	w := &worker{t: t, rng: newRNG(t.opt.Seed, uint64(j)+1), first: first, end: end, private: private,
		sen: make([]int32, 0, maxSentence), neu1e: make([]float32, t.dim)}
	if private {
		w.in, w.out = newRowCache(len(t.keep)), newRowCache(len(t.keep))
	}
	return w
}

func (w *worker) rewind() {
	w.si = w.first
	w.p = w.t.starts[w.first]
}

// round trains sentences (or 1000-word pieces of them) until at least
// syncWords training words were read or the shard ends, and returns the
// number read.
func (w *worker) round(alpha float32) int64 {
	t := w.t
	var read int64
	for read < syncWords && w.si < w.end {
		end := t.starts[w.si+1]
		sen := w.sen[:0]
		for w.p < end && len(sen) < maxSentence {
			id := t.ids[w.p]
			w.p++
			read++
			if k := t.keep[id]; k < 1 && k < float64(w.rng.next()>>11)*0x1p-53 {
				continue
			}
			sen = append(sen, id)
		}
		if w.p == end {
			w.si++
		}
		w.kept += int64(len(sen))
		w.sentence(sen, alpha)
	}
	return read
}

// sentence runs skip-gram over one sentence: every word in a (randomly
// shrunk) window of each centre word is a context; as in word2vec, the
// context word's input vector is trained to predict the centre word against
// Negative noise words.
func (w *worker) sentence(sen []int32, alpha float32) {
	win := w.t.opt.Window
	for pos, word := range sen {
		b := below(w.rng.next(), win)
		lo, hi := pos-win+b, pos+win-b
		if lo < 0 {
			lo = 0
		}
		if hi >= len(sen) {
			hi = len(sen) - 1
		}
		for c := lo; c <= hi; c++ {
			if c != pos {
				w.pair(sen[c], word, alpha)
			}
		}
	}
}

func (w *worker) inRow(id int32) []float32  { return w.row(id, w.t.in, &w.in) }
func (w *worker) outRow(id int32) []float32 { return w.row(id, w.t.out, &w.out) }

// row is id's row of a shared table, or of the worker's private copy of it
// (copied in on first use) when the worker trains on private rows.
func (w *worker) row(id int32, shared []float32, c *rowCache) []float32 {
	d := w.t.dim
	if !w.private {
		o := int(id) * d
		return shared[o : o+d : o+d]
	}
	s := c.slot[id]
	if s < 0 {
		s = c.add(id, shared, d)
	}
	o := int(s) * d
	return c.data[o : o+d : o+d]
}

// pair is one skip-gram step with negative sampling (word2vec's inner loop).
func (w *worker) pair(ctx, word int32, alpha float32) {
	t := w.t
	l1 := w.inRow(ctx)
	neu1e := w.neu1e[:len(l1)]
	clear(neu1e)
	for d := 0; d <= t.opt.Negative; d++ {
		target, label := word, float32(1)
		if d > 0 {
			target, label = t.noise.sample(w.rng.next()), 0
			if target == word {
				continue
			}
		}
		l2 := w.outRow(target)
		f := tensor.Dot(l1, l2)
		var g float32
		switch {
		case f >= maxExp:
			g = (label - 1) * alpha
		case f <= -maxExp:
			g = label * alpha
		default:
			i := int((f + maxExp) * expScale)
			if uint(i) >= expTableSize { // rounding at the top end, or NaN
				i = expTableSize - 1
			}
			g = (label - expTable[i]) * alpha
		}
		if g == 0 {
			continue
		}
		tensor.Axpy(g, l2, neu1e)
		tensor.Axpy(g, l1, l2)
	}
	tensor.Axpy(1, neu1e, l1)
}
