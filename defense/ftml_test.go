package defense

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// toy is a small hand-built setting: V = 7 ids (0 pad, 1 unk, 2..6 words).
func toy(d int, seed int64) (*tensor.Tensor, *SynonymTable) {
	r := rand.New(rand.NewSource(seed))
	tab := tensor.New(7, d)
	for i := 2*d - d; i < len(tab.Data); i++ {
		tab.Data[i] = float32(r.NormFloat64())
	}
	clear(tab.Data[:d]) // padding row
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3, 4}, {2}, nil, {6}, {5, 2, 3}})
	return tab, syn
}

func refDist(tab *tensor.Tensor, a, b int32, p float64, squared bool) float64 {
	d := tab.Shape[1]
	return dist(tab.Data[int(a)*d:int(a+1)*d], tab.Data[int(b)*d:int(b+1)*d], p, squared)
}

// refTriplet is Eq. 5/6 written out directly in float64: per text the mean
// of L_tr over its real tokens, then the mean over texts.
func refTriplet(tab *tensor.Tensor, syn *SynonymTable, texts [][]int32, negs []int32, alpha, p float64, wrap bool) float64 {
	var total float64
	var nt int
	for _, tx := range texts {
		var s float64
		var n int
		for _, w := range tx {
			if w <= 1 {
				continue
			}
			var pos float64
			if ss := syn.Of(w); len(ss) > 0 {
				for _, u := range ss {
					pos += refDist(tab, w, u, p, false)
				}
				pos /= float64(len(ss))
			}
			var neg float64
			var nn int
			for _, u := range negs {
				if u == w {
					continue
				}
				neg += math.Min(refDist(tab, w, u, p, false), alpha)
				nn++
			}
			if nn > 0 {
				neg /= float64(nn)
			}
			l := pos - neg + alpha
			if wrap {
				l = math.Max(l, 0)
			}
			s += l
			n++
		}
		if n > 0 {
			total += s / float64(n)
			nt++
		}
	}
	return total / float64(nt)
}

func batchOf(texts [][]int32) (ids []int32, b, l int, lengths []int) {
	for _, t := range texts {
		l = max(l, len(t))
	}
	ids = make([]int32, len(texts)*l)
	for i, t := range texts {
		copy(ids[i*l:], t)
		lengths = append(lengths, len(t))
	}
	return ids, len(texts), l, lengths
}

func tripletValue(c *FTMLConfig, tab *tensor.Tensor, texts [][]int32, negs []int32) float64 {
	t := ag.NewTape()
	ids, b, l, lens := batchOf(texts)
	return float64(c.triplet(t, t.Leaf(tab), c.buildPlan(ids, b, l, lens, c.DropEmpty), negs).Item())
}

var toyTexts = [][]int32{{2, 3, 4, 1, 2}, {5, 6}, {0}, {6, 6, 4}}

// Acceptance check 2: value matches Eq. 5 on a hand-built 2-D table; ≥ 0
// on random tables; max(·,0) changes nothing.
func TestTripletMatchesEq5(t *testing.T) {
	for _, p := range []float64{2, 1, math.Inf(1)} {
		for seed := int64(0); seed < 20; seed++ {
			tab, syn := toy(2, seed)
			c := DefaultFTMLConfig(syn)
			c.P, c.K, c.Alpha = p, 4, 0.5+float64(seed%5)
			negs := []int32{2, 5, 3, 4}
			got := tripletValue(&c, tab, toyTexts, negs)
			want := refTriplet(tab, syn, toyTexts, negs, c.Alpha, p, false)
			wrapped := refTriplet(tab, syn, toyTexts, negs, c.Alpha, p, true)
			if math.Abs(got-want) > 1e-5*math.Max(1, want) {
				t.Fatalf("p=%g seed %d: triplet %v, Eq. 5 gives %v", p, seed, got, want)
			}
			if want < 0 || wrapped != want {
				t.Fatalf("p=%g seed %d: Eq. 5 %v, wrapped %v", p, seed, want, wrapped)
			}
		}
	}
	// Exactly hand-computed: anchor 2 at (0,0), synonyms 3 at (3,4), 4 at
	// (0,1); negatives 5 at (6,8) (d=10 > α) and 6 at (1,0) (d=1).
	tab := tensor.From([]float32{0, 0, 0, 0, 0, 0, 3, 4, 0, 1, 6, 8, 1, 0}, 7, 2)
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3, 4}, nil, nil, nil, nil})
	c := DefaultFTMLConfig(syn)
	c.K, c.Alpha = 8, 2
	got := tripletValue(&c, tab, [][]int32{{2}}, []int32{5, 6})
	// pull (5+1)/2 = 3; push (min(10,2)+min(1,2))/2 = 1.5; 3 − 1.5 + 2 = 3.5
	if math.Abs(got-3.5) > 1e-6 {
		t.Fatalf("hand-built triplet %v, want 3.5", got)
	}
}

func TestTripletZeroWhenCollapsedAndFar(t *testing.T) {
	// Words 2, 3, 4 all at the same point; 5, 6 far away.
	tab := tensor.From([]float32{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 50, 0, 0, 50}, 7, 2)
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3, 4}, {2, 4}, {2}, nil, nil})
	c := DefaultFTMLConfig(syn)
	c.Alpha = 6
	if got := tripletValue(&c, tab, [][]int32{{2, 3}, {4, 4}}, []int32{5, 6, 6}); math.Abs(got) > 1e-6 {
		t.Fatalf("triplet = %v, want 0", got)
	}
}

// Acceptance check 3: a negative beyond α gets no gradient; one within α
// gets a gradient that increases its distance.
func TestClipping(t *testing.T) {
	tab := tensor.From([]float32{0, 0, 0, 0, 0, 0, 0, 0.5, 0, 0, 9, 0, 1, 0}, 7, 2)
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3}, nil, nil, nil, nil})
	c := DefaultFTMLConfig(syn)
	c.Alpha = 2
	tp := ag.NewTape()
	in := tp.Leaf(tab)
	loss := c.triplet(tp, in, plan{anchors: []int32{2}, weight: []float64{1}}, []int32{5, 6})
	tp.Backward(loss)
	g := in.Grad.Data
	if g[10] != 0 || g[11] != 0 {
		t.Fatalf("far negative got gradient %v", g[10:12])
	}
	// Row 6 is at (1,0), anchor at (0,0): descending must move it to +x.
	if !(g[12] < 0) {
		t.Fatalf("near negative gradient %v does not push it away", g[12:14])
	}
	if !(g[7] > 0) { // synonym at (0,0.5) is pulled towards the anchor
		t.Fatalf("synonym gradient %v does not pull it in", g[6:8])
	}
}

// Gradients of the metric terms w.r.t. the table agree with finite
// differences, for every norm and for CML.
func TestGradCheck(t *testing.T) {
	ids, b, l, lens := batchOf(toyTexts)
	negs := []int32{2, 5, 3, 4, 6}
	for _, tc := range []struct {
		name    string
		p       float64
		squared bool
		cml     bool
		pullK   bool
		token   bool
	}{{name: "l2", p: 2}, {name: "l2-squared", p: 2, squared: true}, {name: "l1", p: 1},
		{name: "inf", p: math.Inf(1)}, {name: "pull-k-token", p: 2, pullK: true, token: true}, {name: "cml", p: 2, cml: true}} {
		t.Run(tc.name, func(t *testing.T) {
			tab, syn := toy(5, 3)
			tab64 := tab.Clone()
			c := DefaultFTMLConfig(syn)
			c.P, c.Squared, c.K, c.PullByK, c.TokenWeighted = tc.p, tc.squared, 3, tc.pullK, tc.token
			c.Alpha = 0.9 * FTMLAlpha0(tab, tc.p, tc.squared, rand.New(rand.NewSource(1)))
			err := ag.GradCheck([]*tensor.Tensor{tab64}, 1e-3, 2e-2, func(tp *ag.Tape, in []*ag.Var) *ag.Var {
				pl := c.buildPlan(ids, b, l, lens, tc.cml)
				if tc.cml {
					m := &CML{FTMLConfig: c, Tau: 0.7}
					return m.contrastive(tp, in[0], pl, negs)
				}
				return c.triplet(tp, in[0], pl, negs)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Acceptance check 5: with |S(w)| = 1, negatives beyond α and τ → ∞,
// L_ct → log(1+k); and Eq. 7 on a toy table.
func TestCML(t *testing.T) {
	tab := tensor.From([]float32{0, 0, 0, 0, 0, 0, 0, 1, 30, 0, 0, 30, -30, 0, 0, -30}, 8, 2)
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3}, nil, nil, nil, nil, nil})
	c := DefaultFTMLConfig(syn)
	c.Alpha = 5
	negs := []int32{4, 5, 6, 7, 4, 5, 6, 7}
	m := &CML{FTMLConfig: c, Tau: 1e7}
	tp := ag.NewTape()
	got := float64(m.contrastive(tp, tp.Leaf(tab), plan{anchors: []int32{2}, weight: []float64{1}}, negs).Item())
	if math.Abs(got-math.Log(9)) > 1e-4 {
		t.Fatalf("L_ct = %v, want log 9 = %v", got, math.Log(9))
	}
	// Eq. 7 on a random toy table with the anchor among the negatives.
	tab2, syn2 := toy(3, 5)
	c2 := DefaultFTMLConfig(syn2)
	c2.K, c2.Alpha = 3, 1.5
	m2 := &CML{FTMLConfig: c2, Tau: 0.5}
	negs2 := []int32{2, 4, 5, 6}
	tp = ag.NewTape()
	for _, a := range []int32{2, 6} {
		got := float64(m2.contrastive(tp, tp.Leaf(tab2), plan{anchors: []int32{a}, weight: []float64{1}}, negs2).Item())
		var num, den float64
		for _, u := range syn2.Of(a) {
			d := refDist(tab2, a, u, 2, false)
			num += math.Exp(-d / 0.5)
			den += math.Exp(-math.Min(d, 1.5) / 0.5)
		}
		for _, u := range negs2 {
			if u != a {
				den += math.Exp(-math.Min(refDist(tab2, a, u, 2, false), 1.5) / 0.5)
			}
		}
		if want := -math.Log(num / den); math.Abs(got-want) > 1e-5 {
			t.Fatalf("anchor %d: L_ct = %v, Eq. 7 gives %v", a, got, want)
		}
	}
}

func TestAlpha0(t *testing.T) {
	tab := tensor.From([]float32{0, 0, 9, 9, 0, 0, 3, 4, 0, 1}, 5, 2)
	// Pairs among rows 2..4: d(0,0;3,4)=5, d(0,0;0,1)=1, d(3,4;0,1)=sqrt(18).
	want := (5 + 1 + math.Sqrt(18)) / 3
	if got := FTMLAlpha0(tab, 2, false, nil); math.Abs(got-want) > 1e-9 {
		t.Fatalf("alpha0 %v, want %v", got, want)
	}
	c := DefaultFTMLConfig(NewSynonymTableIDs(make([][]int32, 5)))
	c.InitAlpha(tab)
	if math.Abs(c.Alpha-0.7*want) > 1e-9 || c.Alpha0 != want {
		t.Fatalf("alpha %v alpha0 %v", c.Alpha, c.Alpha0)
	}
}

func TestNegativesSkipSpecialIDs(t *testing.T) {
	c := DefaultFTMLConfig(nil)
	c.K = 1000
	seen := map[int32]bool{}
	for _, n := range c.sampleNegatives(6) {
		if n < 2 || n > 5 {
			t.Fatalf("negative %d outside 2..5", n)
		}
		seen[n] = true
	}
	if len(seen) != 4 {
		t.Fatalf("negatives cover %v", seen)
	}
}
