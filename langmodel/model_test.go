package langmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustTrain(t testing.TB, c [][]string, opt Options) *Model {
	t.Helper()
	m, err := Train(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// allTokens lists every predictable token: the words, </s> and <unk>.
func allTokens(m *Model) []string {
	return append([]string{EOS, Unknown}, m.words...)
}

func TestSumsToOne(t *testing.T) {
	corpus := newGrammar(1, 30, 60, 40).corpus(3000)
	// Words that occur once become <unk> under MinCount 2, so <unk> has
	// counts of its own.
	corpus = append(corpus, []string{"the", "hapax", "sat"}, []string{"zyzzyva"})
	r := rand.New(rand.NewPCG(2, 3))
	for _, order := range []int{1, 2, 3} {
		m := mustTrain(t, corpus, Options{Order: order, MinCount: 2})
		if m.wordID("hapax") != unkID {
			t.Fatal("a word below MinCount kept its own id")
		}
		contexts := [][]string{
			nil, {"the"}, {"the", "cat"}, {"cat", "sat"}, {BOS, BOS}, {BOS, "the"},
			{"never-seen"}, {"the", "never-seen"}, {"never-seen", "cat"}, {Unknown, "sat"},
			{"sat", "the"}, {EOS, "the"}, {"the", BOS},
		}
		for range 40 { // random pairs, mostly unseen as bigrams
			s := corpus[r.IntN(len(corpus))]
			contexts = append(contexts, []string{s[r.IntN(len(s))], corpus[r.IntN(len(corpus))][0]})
		}
		for range 40 { // seen histories
			s := corpus[r.IntN(len(corpus))]
			j := r.IntN(len(s) + 1)
			contexts = append(contexts, s[:j])
		}
		for _, ctx := range contexts {
			var sum float64
			for _, w := range allTokens(m) {
				p := m.Prob(ctx, w)
				if !(p > 0 && p <= 1) {
					t.Fatalf("order %d: P(%q | %q) = %v", order, w, ctx, p)
				}
				sum += p
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("order %d: Σ P(· | %q) = %.15f", order, ctx, sum)
			}
			if p := m.Prob(ctx, BOS); p != 0 {
				t.Errorf("order %d: P(<s> | %q) = %v, want 0", order, ctx, p)
			}
		}
	}
}

// TestHandComputed checks P(c | a b) on a three-sentence corpus against the
// arithmetic below (order 3, vocabulary a b c d + </s> <unk>: 6 tokens).
//
// Raw trigram counts (<s> <s> padding):
//
//	<s><s>a 2, <s>ab 2, abc 1, abd 1, bc</s> 2, bd</s> 1, <s><s>b 1, <s>bc 1
//	n1=5 n2=3 n3=0: Y = 5/11, D1 = 1 − 2·(5/11)·3/5 = 5/11;
//	D2 = 2 − 3Y·0/3 = 2 is not below 2, so D2 falls back to 1.
//	History "a b": abc 1, abd 1, total 2, two singletons:
//	α(abc) = (1 − 5/11)/2 = 3/11, γ(ab) = (5/11)·2/2 = 5/11.
//
// Bigram counts: continuation counts (distinct trigram types ending in the
// bigram), except <s>-initial ones, which keep raw counts:
//
//	<s>a 2 (raw), <s>b 1 (raw), ab 1, bc 2 (abc, <s>bc), bd 1, c</s> 1, d</s> 1
//	n1=5 n2=2 n3=0: Y = 5/9, D1 = 1 − 2·(5/9)·2/5 = 5/9, D2 = 1 (fallback).
//	History "b": bc 2, bd 1, total 3:
//	α(bc) = (2 − 1)/3 = 1/3, γ(b) = (5/9·1 + 1·1)/3 = 14/27.
//
// Unigram continuation counts (distinct bigram types ending in the word):
//
//	a 1, b 2, c 1, d 1, </s> 2; total 7
//	n1=3 n2=2 n3=0: Y = 3/7, D1 = 1 − 2·(3/7)·2/3 = 3/7, D2 = 1 (fallback).
//	α(c) = (1 − 3/7)/7 = 4/49, γ = (3/7·3 + 1·2)/7 = 23/49.
//
// Interpolation:
//
//	P1(c)     = 4/49 + 23/49 · 1/6        = 47/294
//	P2(c|b)   = 1/3 + 14/27 · 47/294      = 1/3 + 47/567 = 236/567
//	P3(c|a b) = 3/11 + 5/11 · 236/567     = (1701 + 1180)/6237 = 2881/6237
//
// And for a one-word context, padded to "<s> b" (only <s>bc seen, count 1):
//
//	P3(c|<s> b) = (1 − 5/11)/1 + 5/11 · 236/567 = (3402 + 1180)/6237 = 4582/6237
func TestHandComputed(t *testing.T) {
	corpus := [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"b", "c"}}
	m := mustTrain(t, corpus, Options{})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"D1 order 3", m.Discounts(3)[0], 5.0 / 11},
		{"D2 order 3", m.Discounts(3)[1], 1},
		{"D3+ order 3", m.Discounts(3)[2], 1.5},
		{"D1 order 2", m.Discounts(2)[0], 5.0 / 9},
		{"D1 order 1", m.Discounts(1)[0], 3.0 / 7},
		{"P1(c)", m.p1[m.wordID("c")], 47.0 / 294},
		{"P2(c|b)", m.prob2("b", "c"), 236.0 / 567},
		{"P3(c|a b)", m.Prob([]string{"a", "b"}, "c"), 2881.0 / 6237},
		{"P3(c|<s> b)", m.Prob([]string{"b"}, "c"), 4582.0 / 6237},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
}

func TestDiscountFallback(t *testing.T) {
	for _, c := range []struct {
		vals []uint64
		want [3]float64
	}{
		{nil, [3]float64{0.5, 1, 1.5}},
		{[]uint64{1, 1, 1}, [3]float64{0.5, 1, 1.5}}, // n2 = 0: D1 would be 1
		{[]uint64{2, 2, 5}, [3]float64{0.5, 1, 1.5}}, // n1 = 0
		// n1=4 n2=2 n3=1 n4=1: Y = 1/2, D1 = 1/2, D2 = 2 − 3/2·1/2 = 5/4,
		// D3 = 3 − 2·1 = 1.
		{[]uint64{1, 1, 1, 1, 2, 2, 3, 4, 9}, [3]float64{0.5, 1.25, 1}},
	} {
		if got := discounts(c.vals); got != c.want {
			t.Errorf("discounts(%v) = %v, want %v", c.vals, got, c.want)
		}
	}
}

func TestOrdering(t *testing.T) {
	g := newGrammar(7, 200, 500, 300)
	corpus := g.corpus(20000)
	m := mustTrain(t, corpus, Options{Label: "toy"})
	if p, q := m.Prob([]string{"the"}, "cat"), m.Prob([]string{"the"}, "sat"); !(p > q) {
		t.Errorf("P(cat|the) = %g not above P(sat|the) = %g", p, q)
	}
	if p, q := m.Prob([]string{"the", "cat"}, "sat"), m.Prob([]string{"the", "cat"}, "mat"); !(p > q) {
		t.Errorf("P(sat|the cat) = %g not above P(mat|the cat) = %g", p, q)
	}
	good := strings.Fields("the cat sat on the mat")
	bad := strings.Fields("the sat cat on the mat")
	if a, b := m.SentenceLogProb(good), m.SentenceLogProb(bad); !(a > b) {
		t.Errorf("log P(%v) = %g not above log P(%v) = %g", good, a, bad, b)
	}
	if a, b := m.LogProb(good, 1), m.LogProb(bad, 1); !(a > b) {
		t.Errorf("LogProb at 1: %g for %v, %g for %v", a, good, b, bad)
	}

	// Held-out sentences: replacing the subject noun by a verb, or swapping
	// it with the verb, should nearly always score worse.
	held := newGrammar(8, 200, 500, 300)
	var sub, swap, n int
	for range 500 {
		s := held.sentence()
		i := 1
		if !strings.HasPrefix(s[i], "noun") && !isIn(s[i], held.noun) {
			i = 2 // an adjective came first
		}
		next := append([]string(nil), s...)
		next[i] = held.verb[held.zVerb.Uint64()]
		if m.LogProb(s, i) > m.LogProb(next, i) {
			sub++
		}
		// LogProb's difference is the whole sentences' difference: only
		// the terms touching i change.
		d1 := m.LogProb(s, i) - m.LogProb(next, i)
		d2 := m.SentenceLogProb(s) - m.SentenceLogProb(next)
		if math.Abs(d1-d2) > 1e-9*math.Max(1, math.Abs(d2)) {
			t.Fatalf("LogProb difference %g, sentence difference %g for %v -> %v", d1, d2, s, next)
		}
		sw := append([]string(nil), s...)
		sw[i], sw[i+1] = sw[i+1], sw[i]
		if m.SentenceLogProb(s) > m.SentenceLogProb(sw) {
			swap++
		}
		n++
	}
	if sub < n*95/100 || swap < n*95/100 {
		t.Errorf("original preferred in %d/%d substitutions and %d/%d swaps", sub, n, swap, n)
	}
}

// prob2 is the bigram level of a trigram model, P2(w | h).
func (m *Model) prob2(h, w string) float64 {
	a, _ := m.a2.get(uint64(m.wordID(h))<<idBits | uint64(m.wordID(w)))
	return a + m.g2[m.wordID(h)]*m.p1[m.wordID(w)]
}

func isIn(w string, list []string) bool {
	for _, x := range list {
		if x == w {
			return true
		}
	}
	return false
}

func TestLogProbEdges(t *testing.T) {
	m := mustTrain(t, newGrammar(3, 20, 30, 20).corpus(500), Options{})
	words := []string{"the", "cat", "sat"}
	for _, i := range []int{-1, 3, 100, math.MinInt} {
		if v := m.LogProb(words, i); !math.IsInf(v, -1) {
			t.Errorf("LogProb(i=%d) = %v, want -Inf", i, v)
		}
	}
	if v := m.LogProb(nil, 0); !math.IsInf(v, -1) {
		t.Errorf("LogProb(nil, 0) = %v", v)
	}
	for _, order := range []int{1, 2, 3} {
		m := mustTrain(t, newGrammar(3, 20, 30, 20).corpus(500), Options{Order: order})
		for _, ws := range [][]string{
			{"qwerty"}, {"the", "qwerty", "sat"}, {BOS, EOS, Unknown, ""}, {"the", "cat", "sat", "on", "the", "mat"},
		} {
			for i := range ws {
				if v := m.LogProb(ws, i); math.IsInf(v, 0) || math.IsNaN(v) || v > 0 {
					t.Errorf("order %d: LogProb(%q, %d) = %v", order, ws, i, v)
				}
			}
			if v := m.SentenceLogProb(ws); math.IsInf(v, 0) || math.IsNaN(v) || v > 0 {
				t.Errorf("order %d: SentenceLogProb(%q) = %v", order, ws, v)
			}
		}
		// Marker strings in text are unknown words, not markers.
		if a, b := m.LogProb([]string{"the", BOS}, 1), m.LogProb([]string{"the", "qwerty"}, 1); a != b {
			t.Errorf("order %d: LogProb of <s> in text %v, of an unknown word %v", order, a, b)
		}
		if m.Prob(nil, "qwerty") != m.Prob(nil, Unknown) {
			t.Errorf("order %d: unknown word and <unk> differ", order)
		}
	}
}

func TestName(t *testing.T) {
	c := [][]string{{"a", "b", "c"}, {"a", "b"}}
	if got := mustTrain(t, c, Options{Label: "imdb-train"}).Name(); got != "kn3(imdb-train, V=3)" {
		t.Errorf("Name = %q", got)
	}
	if got := mustTrain(t, c, Options{Order: 2}).Name(); got != "kn2(V=3)" {
		t.Errorf("Name = %q", got)
	}
}

func TestTrainErrors(t *testing.T) {
	for _, c := range []struct {
		corpus [][]string
		opt    Options
		want   string
	}{
		{nil, Options{}, "no training tokens"},
		{[][]string{{}, {}}, Options{}, "no training tokens"},
		{[][]string{{"a"}}, Options{Order: 4}, "order 4"},
		{[][]string{{"a"}}, Options{Order: -1}, "order -1"},
	} {
		_, err := Train(c.corpus, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Train(%v, %+v) error %v, want one containing %q", c.corpus, c.opt, err, c.want)
		}
	}
	// Only marker strings: no word types, but tokens to learn from.
	m, err := Train([][]string{{BOS, EOS}}, Options{})
	if err != nil || m.VocabSize() != 0 || !(m.Prob(nil, Unknown) > 0) {
		t.Errorf("marker-only corpus: %v, %v", m, err)
	}
}

func TestVocabularyLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 2^21 words")
	}
	n := maxIDs - firstWordID + 1
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	if _, err := Train([][]string{s}, Options{Order: 1}); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("%d word types: error %v", n, err)
	}
	if _, err := Train([][]string{s[1:]}, Options{Order: 1}); err != nil {
		t.Errorf("%d word types: %v", n-1, err)
	}
}

func TestTable(t *testing.T) {
	var zero table
	if _, ok := zero.get(5); ok {
		t.Error("zero table holds a key")
	}
	tb := newTable(1000)
	for k := range uint64(1000) {
		tb.put(k*7919, float64(k))
	}
	tb.put(0, -1)
	for k := range uint64(1000) {
		v, ok := tb.get(k * 7919)
		want := float64(k)
		if k == 0 {
			want = -1
		}
		if !ok || v != want {
			t.Fatalf("get(%d) = %v, %v", k*7919, v, ok)
		}
	}
	if _, ok := tb.get(3); ok {
		t.Error("absent key found")
	}
}
