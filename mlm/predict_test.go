package mlm

import (
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// predictorModel is a random transformer with a head over a vocabulary
// whose words split into pieces ("unhappy" = un ##happy, "playing" = play
// ##ing), with the head's bias spread so that probabilities differ.
func predictorModel(t *testing.T) *model.Model {
	t.Helper()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "the", "a", "film", "movie", "good", "bad",
		"happy", "sad", "play", "un", "##happy", "##ing", "##s", "is", "was", "fun", "dull"}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions = 1, 32, 32
	cfg.Transformer, cfg.EmbedDim, cfg.Reconstructor = &tc, 16, true
	opts := wp.Options()
	r := rand.New(rand.NewSource(3))
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"0", "1"}, Pieces: &opts}, wp, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Net.Rec.Bias.Value.Data {
		m.Net.Rec.Bias.Value.Data[i] = float32(2 * r.NormFloat64())
	}
	return m
}

// headLogProbs is the head's log-probabilities at piece position pos of
// the words, computed directly.
func headLogProbs(t *testing.T, m *model.Model, words []string, pos int) []float32 {
	enc, _ := m.Pieces.EncodeWords(words, m.MaxLen)
	h, _ := NewHead(m.Net, 0)
	tp := ag.NewTape()
	tp.NoGrad = true
	return logSoftmax(h.Logits(tp, nn.MakeBatch([][]int32{enc.IDs}, nil, 1), []int{pos}).Value.Data)
}

// BAE's list: the whole words at the masked position, most likely first,
// none below the probability floor, at most k; the same as ranking the
// head's output by hand.
func TestPredictorMasked(t *testing.T) {
	m := predictorModel(t)
	p, err := NewPredictor(m, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"the", "film", "was", "good", "."}
	lp := headLogProbs(t, m, []string{"the", "film", "was", "[MASK]", "."}, 4) // [CLS] the film was [MASK]
	var want []string
	ids := make([]int, len(lp))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return lp[ids[a]] > lp[ids[b]] })
	const floor = 0.02
	for _, id := range ids {
		if math.Exp(float64(lp[id])) < floor || len(want) == 5 {
			break
		}
		if tok := m.Pieces.Token(int32(id)); wholeWord(tok) {
			want = append(want, tok)
		}
	}
	got := p.Masked(words, 3, 5, floor)
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("Masked %v, by hand %v", got, want)
	}
	for _, w := range got {
		if strings.HasPrefix(w, "##") || w == "." || w == "[MASK]" {
			t.Errorf("%q is not a whole word", w)
		}
	}
	if all := p.Masked(words, 3, 100, 0); len(all) != 14 { // every whole word of the vocabulary: 24 entries less 5 specials, 2 marks, 3 continuations
		t.Errorf("no floor, no cap: %d words %v", len(all), all)
	}
}

// BERT-Attack's list: one piece reads the position's top k; a word of two
// pieces gets the lowest-perplexity joins, which a search over every pair
// confirms; a second call is served from the cache unchanged.
func TestPredictorInPlace(t *testing.T) {
	m := predictorModel(t)
	p, _ := NewPredictor(m, "tiny")
	words := []string{"the", "movie", "is", "unhappy", "."}
	// Pieces: [CLS]=0 the=1 movie=2 is=3 un=4 ##happy=5 .=6
	one := p.InPlace(words, 1, 4)
	lp := headLogProbs(t, m, words, 2)
	var want []string
	for _, id := range topK(lp, 4) {
		if tok := m.Pieces.Token(id); wholeWord(tok) {
			want = append(want, tok)
		}
	}
	if !slices.Equal(one, want) {
		t.Errorf("one piece: %v, want %v", one, want)
	}
	got := p.InPlace(words, 3, 24) // every piece: 576 pairs, 24 kept
	a, b := headLogProbs(t, m, words, 4), headLogProbs(t, m, words, 5)
	type pair struct {
		w string
		s float64
	}
	var pairs []pair
	for _, i := range topK(a, 24) {
		for _, j := range topK(b, 24) {
			pairs = append(pairs, pair{m.Pieces.Token(i) + "\x00" + m.Pieces.Token(j), float64(a[i]) + float64(b[j])})
		}
	}
	sort.SliceStable(pairs, func(x, y int) bool { return pairs[x].s > pairs[y].s })
	want = nil
	for _, pr := range pairs[:24] {
		first, second, _ := strings.Cut(pr.w, "\x00")
		if wholeWord(first) && strings.HasPrefix(second, "##") {
			want = append(want, first+strings.TrimPrefix(second, "##"))
		}
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("two pieces: %v, by hand %v", got, want)
	}
	if again := p.InPlace(words, 3, 24); !slices.Equal(again, got) {
		t.Errorf("cached call %v, first %v", again, got)
	}
	if p.InPlace(append(slices.Repeat([]string{"the"}, 40), "film"), 40, 5) != nil {
		t.Error("a word truncated away has candidates")
	}
}

// The beam over positions finds exactly the best combinations of a search
// over all of them.
func TestBestCombosExact(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for trial := range 20 {
		n, k := 2+trial%3, 3+trial%4
		rows := make([]ranked, n)
		for i := range rows {
			for j := range k {
				rows[i].ids = append(rows[i].ids, int32(j))
				rows[i].lp = append(rows[i].lp, float32(-3*r.Float64()))
			}
		}
		var all []float64
		var rec func(i int, s float64)
		rec = func(i int, s float64) {
			if i == n {
				all = append(all, s)
				return
			}
			for j := range rows[i].lp {
				rec(i+1, s+float64(rows[i].lp[j]))
			}
		}
		rec(0, 0)
		sort.Sort(sort.Reverse(sort.Float64Slice(all)))
		got := bestCombos(rows, k)
		for i, c := range got {
			if math.Abs(c.sum-all[i]) > 1e-9 || len(c.ids) != n {
				t.Fatalf("trial %d, rank %d: %g, exhaustive %g", trial, i, c.sum, all[i])
			}
		}
	}
}
