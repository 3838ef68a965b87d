package attack

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// countingNet counts the sequences a classifier scores in full.
type countingNet struct {
	*nn.Classifier
	full int
}

func (c *countingNet) Predict(seqs [][]int32) [][]float32 {
	c.full += len(seqs)
	return c.Classifier.Predict(seqs)
}

// TestIncrementalSameResults: every search gives the same results with and
// without the incremental fast path, on small random CNN, LSTM and BiLSTM
// victims, and the fast path does take most of the queries.
func TestIncrementalSameResults(t *testing.T) {
	tg, syn, ex := synthTask()
	for _, arch := range nn.Archs {
		cfg := nn.DefaultConfig(arch)
		cfg.VocabSize, cfg.EmbedDim, cfg.Filters, cfg.Hidden = tg.Vocab.Len(), 16, 8, 8
		cfg.EmbedInit = 1
		m, err := nn.New(cfg, rand.New(rand.NewSource(5)))
		if err != nil {
			t.Fatal(err)
		}
		// Sharpen the head and centre it on these texts, so that single
		// substitutions can flip the prediction either way.
		for i := range m.Out.W.Value.Data {
			m.Out.W.Value.Data[i] *= 8
		}
		var seqs [][]int32
		for _, e := range ex {
			seqs = append(seqs, tg.Vocab.Encode(text.Texts(tg.Tok.Tokenize(e.Text)), tg.MaxLen))
		}
		var shift float64
		for _, p := range m.Predict(seqs) {
			shift += math.Log(float64(p[1]) / float64(p[0]))
		}
		m.Out.B.Value.Data[1] -= float32(shift / float64(len(seqs)))
		// Label each example with the model's own prediction, so that
		// none is skipped and every search has work to do. Texts within
		// 1e-3 of the decision boundary are left out: there the 1e-6
		// rounding differences between the paths (different GEMM blocking,
		// TestIncrementalMatchesPredict bounds them) may legitimately flip
		// the label.
		var exs []Example
		for i, e := range ex {
			p := m.Predict(seqs[i : i+1])[0]
			if math.Abs(float64(p[1]-p[0])) < 1e-3 {
				continue
			}
			e.Label = nn.Argmax(p)
			exs = append(exs, e)
		}
		attacks := map[string]*Attack{}
		for name, s := range searches() {
			attacks[name] = &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Pre: []PreConstraint{MaxModificationRate{Rate: 0.25}}, Search: s}
		}
		// Budgets that run out mid-search: the GA's and PSO's family sweep
		// (State.QueryFamilies) must cut where Query does.
		for _, name := range []string{"genetic", "pso"} {
			for _, b := range []int{1, 3, 6, 10} {
				a := *attacks[name]
				a.QueryBudget = b
				attacks[fmt.Sprintf("%s/budget=%d", name, b)] = &a
			}
		}
		for name, a := range attacks {
			var runs [][]Result
			var full []int
			for _, off := range []bool{true, false} {
				net := &countingNet{Classifier: m}
				vt := tg
				vt.Victim, vt.NoIncremental, vt.InputGrad = net, off, m.InputGradL1
				rs, err := RunAll(context.Background(), a, vt, exs, RunOptions{Workers: 1, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, stripSeconds(rs))
				full = append(full, net.full)
			}
			differ := false
			for i := range runs[0] {
				if reflect.DeepEqual(runs[0][i], runs[1][i]) {
					continue
				}
				// The paths round differently (1e-7: OpenBLAS picks other
				// kernels for the fast path's one-row products), which can
				// break a near-tie in a search's ordering differently. That
				// is accepted only when the fast path scores both final texts
				// like a full forward pass, to 1e-5.
				if fastAgrees(m, tg, runs[0][i].OriginalText, runs[0][i].PerturbedText, runs[1][i].PerturbedText) {
					t.Logf("%s/%s example %d: searches diverged at a near-tie; both end texts score identically on both paths", arch, name, i)
					continue
				}
				differ = true
				t.Errorf("%s/%s example %d:\n exact %+v\n fast  %+v", arch, name, i, runs[0][i], runs[1][i])
			}
			if differ {
				continue
			}
			sum := Summarize(runs[0])
			queries := 0
			for _, r := range runs[0] {
				queries += r.NumQueries
				if a.QueryBudget > 0 && r.NumQueries > a.QueryBudget {
					t.Errorf("%s/%s: %d queries over a budget of %d", arch, name, r.NumQueries, a.QueryBudget)
				}
			}
			t.Logf("%s/%s: %d successful of %d; %d queries, %d scored in full with the fast path", arch, name, sum.Successful, sum.N, queries, full[1])
			if sum.Successful > 0 && full[1]*2 > queries {
				t.Errorf("%s/%s: the fast path scored only %d of %d queries", arch, name, queries-full[1], queries)
			}
		}
	}
}

// fastAgrees reports whether the incremental evaluator, based at orig,
// scores each text like a full forward pass (to 1e-5).
func fastAgrees(m *nn.Classifier, tg Target, orig string, texts ...string) bool {
	enc := func(s string) []int32 { return tg.Vocab.Encode(text.Texts(tg.Tok.Tokenize(s)), tg.MaxLen) }
	base := enc(orig)
	for _, s := range texts {
		seq := enc(s)
		swaps, ok := nn.Diff(base, seq, len(seq))
		if !ok {
			return false
		}
		inc := m.NewIncremental()
		inc.SetBase(base)
		fast := inc.PredictEdits([][]nn.Swap{swaps})[0]
		full := m.Predict([][]int32{seq})[0]
		var worst float64
		for j := range full {
			worst = max(worst, math.Abs(float64(fast[j]-full[j])))
		}
		if worst > 1e-5 {
			return false
		}
	}
	return true
}

// TestQueryFamiliesMatchesQuery: QueryFamilies on a recurrent victim scores
// distinct parents and their kids (one or several swaps, duplicates,
// cached ones, a kid of another length) like Query(parents) then
// Query(kids) with full forward passes, counts the same queries and cuts
// the same ones under a budget.
func TestQueryFamiliesMatchesQuery(t *testing.T) {
	for _, arch := range []string{"lstm", "bilstm"} {
		cfg := nn.DefaultConfig(arch)
		cfg.VocabSize, cfg.EmbedDim, cfg.Hidden, cfg.NumClasses = 40, 8, 6, 3
		m, err := nn.New(cfg, rand.New(rand.NewSource(2)))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewSource(9))
		word := func() int32 { return int32(2 + r.Intn(cfg.VocabSize-2)) }
		const n = 30
		orig := make([]int32, n)
		for i := range orig {
			orig[i] = word()
		}
		var parents, kids [][]int32
		var of []int
		for p := 0; p < 6; p++ {
			q := append([]int32(nil), orig...)
			for j := 0; j < p*3; j++ {
				q[r.Intn(n)] = word()
			}
			parents = append(parents, q)
			for k := 0; k < 5; k++ {
				kid := append([]int32(nil), q...)
				for j := 0; j <= k/3; j++ {
					kid[r.Intn(n)] = word()
				}
				kids, of = append(kids, kid), append(of, p)
			}
		}
		parents = append(parents, parents[1]) // a repeated parent
		kids, of = append(kids, kids[0], parents[2], orig[:n-1]), append(of, 0, 2, 3)
		for _, budget := range []int{0, 1, 5, 9, 20, 38} {
			states := make([]*State, 2)
			var ps, ks [2][]Scored
			var errs [2]error
			for i, noInc := range []bool{true, false} {
				a := &Attack{Goal: Untargeted{}, QueryBudget: budget}
				s := &State{Target: Target{Victim: m, NoIncremental: noInc}, attack: a, Orig: orig, cache: map[string]Scored{}}
				s.Query([][]int32{parents[3]}) // one parent is cached already
				ps[i], ks[i], errs[i] = s.QueryFamilies(parents, kids, of)
				states[i] = s
			}
			if states[0].Queries != states[1].Queries || (errs[0] == nil) != (errs[1] == nil) || (ks[0] == nil) != (ks[1] == nil) {
				t.Errorf("%s budget %d: %d queries (err %v) with Query, %d (err %v) with QueryFamilies", arch, budget,
					states[0].Queries, errs[0], states[1].Queries, errs[1])
				continue
			}
			for _, pair := range [][2][]Scored{{ps[0], ps[1]}, {ks[0], ks[1]}} {
				for j := range pair[0] {
					a, b := pair[0][j], pair[1][j]
					if (a.Probs == nil) != (b.Probs == nil) {
						t.Errorf("%s budget %d: sequence %d scored on one path only", arch, budget, j)
						continue
					}
					for c := range a.Probs {
						if d := math.Abs(float64(a.Probs[c] - b.Probs[c])); d > 1e-5 {
							t.Errorf("%s budget %d: sequence %d differs by %g", arch, budget, j, d)
						}
					}
				}
			}
		}
	}
}
