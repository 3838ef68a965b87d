package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"slices"
	"sync"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
)

// explainFlags are `attack --explain ig|lime`: interpretation agreement
// between each successful attack's original and adversarial text (FLAT spec
// §9.2: Kendall's τ-b and top-k intersection, position-aligned, averaged
// over classes and then over pairs).
type explainFlags struct {
	method string
	k      int
	label  string // all (spec §12 F11 default) or gold (F11's alternative)
	pairs  int    // explain a seeded uniform sample of this many pairs (0 = all)

	// journal, when set, keeps each pair's scores in this file as they are
	// made (explainjournal.go); resume reuses the pairs it holds; model is
	// the weights digest recorded in it.
	journal string
	resume  bool
	model   string
}

func (e *explainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.method, "explain", "", "after the attack, compare attributions of each successful attack's original and adversarial text: ig or lime (Kendall τ and top-k intersection, FLAT spec §9.2)")
	fs.IntVar(&e.k, "explain-k", 5, "with --explain: k of the top-k intersection")
	fs.IntVar(&e.pairs, "explain-pairs", 0, "with --explain: explain a seeded uniform sample of this many successful attacks (FLAT spec §9.2 samples 1,000 for LIME); 0 = all")
	fs.StringVar(&e.label, "explain-label", "all", "with --explain: all = explain every class and average over classes, then pairs (FLAT spec §9.2, F11's default); gold = explain each pair's gold label, average per gold class, then over classes (F11's alternative)")
}

func (e *explainFlags) check() error {
	switch e.method {
	case "", "ig", "lime":
	default:
		return usageError{fmt.Errorf("--explain %q: want ig or lime", e.method)}
	}
	if err := checkNumbers(e.numbers()...); err != nil {
		return err
	}
	switch e.label {
	case "", "all", "gold":
	default:
		return usageError{fmt.Errorf("--explain-label %q: want all or gold", e.label)}
	}
	return nil
}

// numbers are the range checks of --explain-k and --explain-pairs.
func (e *explainFlags) numbers() []numRule {
	return []numRule{
		{e.k >= 1, "explain-k", e.k, "at least 1"},
		{e.pairs >= 0, "explain-pairs", e.pairs, "≥ 0 (0 = all)"},
	}
}

// labelMode is --explain-label with its default filled in (flags built
// in code may leave it empty).
func (e *explainFlags) labelMode() string {
	if e.label == "" {
		return "all"
	}
	return e.label
}

// Agreement summarises interpretation consistency over attack pairs.
type Agreement struct {
	Method string `json:"method"`
	K      int    `json:"k"`
	// Label is all (every class explained, class-averaged per pair, then
	// averaged over pairs) or gold (each pair's gold label, averaged per
	// gold class, then over the classes).
	Label string `json:"label"`
	// Pairs are the successful attacks explained; SampledFrom, when
	// --explain-pairs sampled them, is how many there were.
	Pairs       int `json:"pairs"`
	SampledFrom int `json:"sampled_from,omitempty"`
	// KendallTau is the mean over pairs of the class-averaged τ-b; a class
	// whose τ is undefined (a constant attribution vector, or one token)
	// is left out of its pair's average and counted in TauUndefined; a pair
	// with no defined class is left out (TauPairs counts the others).
	KendallTau   float64 `json:"kendall_tau"`
	TauPairs     int     `json:"tau_pairs"`
	TauUndefined int     `json:"tau_undefined"`
	// TopK is the mean over pairs of the class-averaged top-k intersection.
	TopK float64 `json:"topk_intersection"`
	// KendallTauSE and TopKSE are the standard errors of the two means
	// (sample standard deviation over the pairs / √pairs; for the gold
	// macro average, √(Σ SE_class²) / classes), so that two models' scores
	// can be told apart from the noise of which pairs the attack produced.
	KendallTauSE float64 `json:"kendall_tau_se"`
	TopKSE       float64 `json:"topk_intersection_se"`
	// LengthMismatch counts pairs whose token counts differ (compared on
	// the shorter length).
	LengthMismatch int     `json:"length_mismatch"`
	Seconds        float64 `json:"seconds"`
}

type pairScore struct {
	gold        int
	tau, ti     float64
	tauOK       bool
	undef       int
	mismatch    bool
	err         error
	explainedOK bool
}

// run explains every successful result's two texts with every class.
func (e *explainFlags) run(m *model.Model, rs []attack.Result, seed int64, workers int) (*Agreement, error) {
	start := time.Now()
	var idx []int
	for i, r := range rs {
		if r.Type == attack.Successful && r.PerturbedText != r.OriginalText {
			idx = append(idx, i)
		}
	}
	total := len(idx)
	if e.pairs > 0 && e.pairs < total {
		pick := rand.New(rand.NewSource(seed)).Perm(total)[:e.pairs]
		slices.Sort(pick)
		for i, p := range pick {
			pick[i] = idx[p]
		}
		idx = pick
	}
	scores := make([]pairScore, len(idx))
	todo := make([]int, 0, len(idx))
	var jr *jsonLinesWriter
	if e.journal != "" {
		h := journalHeader{Model: e.model, Method: e.method, K: e.k, Label: e.labelMode(), Seed: seed}
		j, done, err := openJournal(e.journal, h, e.resume)
		if err != nil {
			return nil, err
		}
		defer j.Close()
		jr = j
		for k, i := range idx {
			r := rs[i]
			l, ok := done[r.Index]
			switch {
			case !ok:
				todo = append(todo, k)
			case l.Texts != pairDigest(r.OriginalText, r.PerturbedText):
				return nil, fmt.Errorf("%s: example %d's texts are not the attack's (the CSV was remade?): remove the journal to explain afresh", e.journal, r.Index)
			default:
				scores[k] = l.score()
			}
		}
	} else {
		for k := range idx {
			todo = append(todo, k)
		}
	}
	// Attributions only read the model, so the pairs run in parallel.
	var wg sync.WaitGroup
	var failed sync.Once
	var firstErr error
	next := make(chan int)
	stop := make(chan struct{})
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				r := rs[idx[j]]
				var classes []int // nil: every class
				if e.label == "gold" {
					classes = []int{r.GroundTruth}
				}
				s := e.pair(m, r.OriginalText, r.PerturbedText, seed+int64(r.Index), classes)
				s.gold = r.GroundTruth
				if s.err == nil && jr != nil {
					if err := jr.write(journalLine{Index: r.Index, Texts: pairDigest(r.OriginalText, r.PerturbedText), Gold: s.gold,
						Tau: s.tau, TI: s.ti, TauOK: s.tauOK, Undefined: s.undef, Mismatch: s.mismatch, Explained: s.explainedOK}); err != nil {
						s.err = fmt.Errorf("%s: %w", e.journal, err)
					}
				}
				if s.err != nil {
					failed.Do(func() { firstErr = s.err; close(stop) })
				}
				scores[j] = s
			}
		}()
	}
feed:
	for _, j := range todo {
		select {
		case next <- j:
		case <-stop:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	a := aggregate(scores, e.label == "gold")
	a.Method, a.K, a.Label = e.method, e.k, e.labelMode()
	if len(idx) < total {
		a.SampledFrom = total
	}
	a.Seconds = time.Since(start).Seconds()
	return a, nil
}

// aggregate averages the pairs' scores: over all pairs, or (byGold) per
// gold class and then over the classes present (a macro average).
func aggregate(scores []pairScore, byGold bool) *Agreement {
	a := &Agreement{}
	type sums struct {
		tau, ti, tau2, ti2 float64
		pairs, tauOK       int
	}
	groups := map[int]*sums{}
	var order []int
	for _, s := range scores {
		if !s.explainedOK {
			continue
		}
		key := 0
		if byGold {
			key = s.gold
		}
		g, ok := groups[key]
		if !ok {
			g = &sums{}
			groups[key] = g
			order = append(order, key)
		}
		a.Pairs++
		g.pairs++
		g.ti += s.ti
		g.ti2 += s.ti * s.ti
		a.TauUndefined += s.undef
		if s.mismatch {
			a.LengthMismatch++
		}
		if s.tauOK {
			a.TauPairs++
			g.tauOK++
			g.tau += s.tau
			g.tau2 += s.tau * s.tau
		}
	}
	var tiMean, tauMean, tiVar, tauVar float64
	tauGroups := 0
	for _, key := range order {
		g := groups[key]
		tiMean += g.ti / float64(g.pairs)
		tiVar += metrics.MeanVariance(g.ti, g.ti2, g.pairs)
		if g.tauOK > 0 {
			tauMean += g.tau / float64(g.tauOK)
			tauVar += metrics.MeanVariance(g.tau, g.tau2, g.tauOK)
			tauGroups++
		}
	}
	if len(order) > 0 {
		a.TopK = tiMean / float64(len(order))
		a.TopKSE = math.Sqrt(tiVar) / float64(len(order))
	}
	if tauGroups > 0 {
		a.KendallTau = tauMean / float64(tauGroups)
		a.KendallTauSE = math.Sqrt(tauVar) / float64(tauGroups)
	}
	return a
}

func (e *explainFlags) attributions(m *model.Model, ids []int32, seed int64, classes []int) ([][]float64, error) {
	if e.method == "ig" {
		return explain.IG(m.Net, ids, classes, 0)
	}
	return explain.LIME(m.Net, ids, classes, explain.LIMEOptions{Seed: seed})
}

// wordAttributions is attributions summed into words (model.Align).
func (e *explainFlags) wordAttributions(m *model.Model, ids []int32, wordOf []int, words int, seed int64, classes []int) ([][]float64, error) {
	sc, err := e.attributions(m, ids, seed, classes)
	if err != nil {
		return nil, err
	}
	for c := range sc {
		sc[c], _ = wordScores(m, sc[c], ids, wordOf, words)
	}
	return sc, nil
}

// pair scores one original/adversarial pair, averaged over classes (nil:
// every class).
func (e *explainFlags) pair(m *model.Model, orig, adv string, seed int64, classes []int) pairScore {
	// Scores are compared word by word: a transformer's word pieces add up
	// into their words (a substitution may change the piece count).
	ow, o, oOf := m.Align(orig)
	aw, a, aOf := m.Align(adv)
	var s pairScore
	n := min(len(ow), len(aw))
	s.mismatch = len(ow) != len(aw)
	if n == 0 {
		return s
	}
	ao, err := e.wordAttributions(m, o, oOf, len(ow), seed, classes)
	if err != nil {
		return pairScore{err: err}
	}
	aa, err := e.wordAttributions(m, a, aOf, len(aw), seed, classes)
	if err != nil {
		return pairScore{err: err}
	}
	var tau, ti float64
	tauN := 0
	for c := range ao {
		x, y := ao[c][:n], aa[c][:n]
		v, err := metrics.TopKIntersection(x, y, e.k)
		if err != nil {
			return pairScore{err: err}
		}
		ti += v
		if t, err := metrics.KendallTauB(x, y); err == nil {
			tau += t
			tauN++
		} else if errors.Is(err, metrics.ErrTauUndefined) || n < 2 {
			s.undef++
		} else {
			return pairScore{err: err}
		}
	}
	s.explainedOK = true
	s.ti = ti / float64(len(ao))
	if tauN > 0 {
		s.tau, s.tauOK = tau/float64(tauN), true
	}
	return s
}

func (a *Agreement) print(w io.Writer) {
	how := "class-averaged, position-aligned"
	if a.Label == "gold" {
		how = "gold label, averaged per gold class, position-aligned"
	}
	sample := ""
	if a.SampledFrom > 0 {
		sample = fmt.Sprintf(", a seeded sample of the %d", a.SampledFrom)
	}
	fmt.Fprintf(w, "  %s agreement over %d successful attacks (%s%s):\n", a.Method, a.Pairs, how, sample)
	fmt.Fprintf(w, "    kendall tau:            %6.4f ± %.4f SE (%d pairs; %d undefined class τ skipped)\n", a.KendallTau, a.KendallTauSE, a.TauPairs, a.TauUndefined)
	fmt.Fprintf(w, "    top-%d intersection:     %6.4f ± %.4f SE\n", a.K, a.TopK, a.TopKSE)
	if a.LengthMismatch > 0 {
		fmt.Fprintf(w, "    length mismatches:      %d (compared on the shorter length)\n", a.LengthMismatch)
	}
}
