package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"sync"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/internal/jsonl"
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

// run explains every successful result's two texts with every class.
func (e *explainFlags) run(m *model.Model, rs []attack.Result, seed int64, workers int) (*explain.Agreement, error) {
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
	scores := make([]explain.PairScore, len(idx))
	todo := make([]int, 0, len(idx))
	var jr *jsonl.Writer
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
				s, err := explain.ScorePair(m, e.method, e.k, r.OriginalText, r.PerturbedText, seed+int64(r.Index), classes)
				s.Gold = r.GroundTruth
				if err == nil && jr != nil {
					if werr := jr.Write(journalLine{Index: r.Index, Texts: pairDigest(r.OriginalText, r.PerturbedText), Gold: s.Gold,
						Tau: s.Tau, TI: s.TI, TauOK: s.TauOK, Undefined: s.Undefined, Mismatch: s.Mismatch, Explained: s.Explained}); werr != nil {
						err = fmt.Errorf("%s: %w", e.journal, werr)
					}
				}
				if err != nil {
					failed.Do(func() { firstErr = err; close(stop) })
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
	a := explain.Aggregate(scores, e.label == "gold")
	a.Method, a.K, a.Label = e.method, e.k, e.labelMode()
	if len(idx) < total {
		a.SampledFrom = total
	}
	a.Seconds = time.Since(start).Seconds()
	return a, nil
}

// printAgreement writes the agreement of attack --explain.
func printAgreement(w io.Writer, a *explain.Agreement) {
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
