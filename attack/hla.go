package attack

import (
	"fmt"
	"sort"

	"github.com/textarmor/textarmor/lexicon"
)

// HLA is the hard-label attack of Maheshwary et al. (2021) as FTML §9
// states it. The search sees only whether a candidate's label differs from
// the gold label (use it with the HardLabel goal; it never reads scores):
//
//  1. Random initialisation: substitute a random synonym at attackable
//     positions taken in random order, one more position per query, until
//     the label flips (at most n queries); otherwise up to InitQueries
//     further queries, each substituting every attackable position at
//     random. No flip: the attack fails.
//  2. Search-space reduction: try restoring each substituted word; among the
//     restorations that keep the label flipped, restore greedily in
//     decreasing order of sentence similarity to the original (on a
//     Window-word window around the position); repeat until no restoration
//     keeps the text adversarial.
//  3. Genetic optimisation: population PopSize, at most Generations
//     generations. Mutation at a random substituted index (at most
//     MaxMutations per index) tries the original word first, else the
//     synonym with the highest windowed similarity that keeps the text
//     adversarial and does not lower the similarity; parents are sampled by
//     softmax of whole-text similarity; uniform crossover; only adversarial
//     children are kept; the best member has the fewest substitutions (ties:
//     higher similarity). Stop after Patience generations without a new
//     best, when one word is substituted, or after MaxEmpty generations
//     without an adversarial child.
//
// Positions come from the static candidate lists (State.Cands: stop words
// and other position constraints hold); the maximum modification rate is a
// final constraint only (HLA starts from a heavily substituted text and
// reduces it), so a result above the rate counts as failed.
type HLA struct {
	Encoder      SentenceEncoder
	PopSize      int // 30
	Generations  int // 100
	InitQueries  int // 2500
	Patience     int // 15
	MaxEmpty     int // 15
	MaxMutations int // 25
	Window       int // 40
}

// DefaultHLA returns the paper's settings with the given encoder.
func DefaultHLA(enc SentenceEncoder) HLA {
	return HLA{Encoder: enc, PopSize: 30, Generations: 100, InitQueries: 2500, Patience: 15, MaxEmpty: 15, MaxMutations: 25, Window: 40}
}

// Name implements Search.
func (h HLA) Name() string {
	return fmt.Sprintf("hla(pop=%d,gens=%d,sim=%s)", h.PopSize, h.Generations, h.Encoder.Name())
}

// flipped reports whether the goal is reached on the label alone (final
// constraints such as the modification rate are not checked).
func (s *State) flipped(r Scored) bool {
	return r.Probs != nil && s.attack.Goal.Achieved(r.Probs, s.Label)
}

// Search implements Search.
func (h HLA) Search(s *State) Scored {
	adv, ok := h.initialise(s)
	if !ok {
		return s.Initial
	}
	best := h.reduce(s, adv)
	if s.Exhausted() {
		return best
	}
	return h.evolve(s, best)
}

func (h HLA) initialise(s *State) (Scored, bool) {
	var pos []int
	for i := range s.Orig {
		if len(s.Cands[i]) > 0 {
			pos = append(pos, i)
		}
	}
	s.Rng.Shuffle(len(pos), func(a, b int) { pos[a], pos[b] = pos[b], pos[a] })
	// The candidates of both stages are drawn without looking at any answer,
	// so they go to the model in batches (one BLAS call instead of one per
	// query); the first flipped one in drawing order wins, as sequentially.
	first := func(qs [][]int32) (Scored, bool, bool) {
		res, err := s.Query(qs)
		for _, r := range res {
			if s.flipped(r) {
				return r, true, false
			}
		}
		return Scored{}, false, err != nil
	}
	// Stage 1: substitute one more random position at a time.
	cur := append([]int32(nil), s.Orig...)
	for lo := 0; lo < len(pos); lo += hlaInitBatch {
		var qs [][]int32
		for _, i := range pos[lo:min(lo+hlaInitBatch, len(pos))] {
			cur[i] = s.Cands[i][s.Rng.Intn(len(s.Cands[i]))]
			qs = append(qs, append([]int32(nil), cur...))
		}
		if r, ok, stop := first(qs); ok || stop {
			return r, ok
		}
	}
	// Stage 2: fresh random substitutions of every position.
	for k := 0; k < h.InitQueries; k += hlaInitBatch {
		var qs [][]int32
		for range min(hlaInitBatch, h.InitQueries-k) {
			q := append([]int32(nil), s.Orig...)
			for _, i := range pos {
				q[i] = s.Cands[i][s.Rng.Intn(len(s.Cands[i]))]
			}
			qs = append(qs, q)
		}
		if r, ok, stop := first(qs); ok || stop {
			return r, ok
		}
	}
	return Scored{}, false
}

// hlaInitBatch is how many initialisation candidates go to the model at
// once. The queries of a batch count even when an earlier one already
// flips the label, so the query count can exceed the sequential one by up
// to hlaInitBatch−1.
const hlaInitBatch = 32

// windowSim is the similarity of the Window words around i of the original
// and of seq.
func (h HLA) windowSim(s *State, seq []int32, i int) float64 {
	return h.Encoder.Similarity(window(s.Words, i, h.Window), window(s.WordsOf(seq), i, h.Window))
}

func (h HLA) fullSim(s *State, seq []int32) float64 {
	return h.Encoder.Similarity(s.Words, s.WordsOf(seq))
}

func (s *State) substituted(seq []int32) []int {
	var out []int
	for i, id := range seq {
		if id != s.Orig[i] {
			out = append(out, i)
		}
	}
	return out
}

func (h HLA) reduce(s *State, best Scored) Scored {
	for {
		subs := s.substituted(best.Seq)
		if len(subs) <= 1 {
			return best
		}
		cands := make([][]int32, len(subs))
		for k, i := range subs {
			cands[k] = append([]int32(nil), best.Seq...)
			cands[k][i] = s.Orig[i]
		}
		res, err := s.Query(cands)
		type opt struct {
			i   int
			sim float64
		}
		var opts []opt
		for k, i := range subs {
			if s.flipped(res[k]) {
				opts = append(opts, opt{i, h.windowSim(s, res[k].Seq, i)})
			}
		}
		if len(opts) == 0 || err != nil {
			if len(opts) > 0 {
				// Budget spent: take the best restoration already scored.
				for k := range subs {
					if s.flipped(res[k]) {
						return res[k]
					}
				}
			}
			return best
		}
		sort.SliceStable(opts, func(a, b int) bool { return opts[a].sim > opts[b].sim })
		changed := false
		for _, o := range opts {
			if s.Modified(best.Seq) <= 1 {
				break
			}
			q := append([]int32(nil), best.Seq...)
			q[o.i] = s.Orig[o.i]
			r, err := s.Query([][]int32{q})
			if s.flipped(r[0]) {
				best, changed = r[0], true
			}
			if err != nil {
				return best
			}
		}
		if !changed {
			return best
		}
	}
}

// better reports whether a is a better adversarial text than b: fewer
// substitutions, then higher similarity.
func (h HLA) better(s *State, a, b Scored, simA, simB float64) bool {
	ma, mb := s.Modified(a.Seq), s.Modified(b.Seq)
	return ma < mb || ma == mb && simA > simB
}

func (h HLA) evolve(s *State, best Scored) Scored {
	P := max(h.PopSize, 1)
	bestSim := h.fullSim(s, best.Seq)
	pop := make([]Scored, P)
	for k := range pop {
		pop[k] = best
	}
	mutations := make([]int, len(s.Orig))
	noChange, empty := 0, 0
	for gen := 0; gen < h.Generations; gen++ {
		if s.Modified(best.Seq) <= 1 || s.Exhausted() {
			break
		}
		var err error
		pop, err = h.mutate(s, pop, mutations)
		sims := make([]float64, len(pop))
		for k, m := range pop {
			sims[k] = h.fullSim(s, m.Seq)
			if h.better(s, m, best, sims[k], bestSim) {
				best, bestSim, noChange = m, sims[k], -1
			}
		}
		if err != nil {
			break
		}
		prob := softmax(sims, 1)
		children := make([][]int32, P)
		for c := range children {
			children[c] = crossover(s, pop, prob)
		}
		res, err := s.Query(children)
		var next []Scored
		for _, r := range res {
			if s.flipped(r) {
				next = append(next, r)
			}
		}
		improved := noChange < 0
		for _, r := range next {
			sim := h.fullSim(s, r.Seq)
			if h.better(s, r, best, sim, bestSim) {
				best, bestSim, improved = r, sim, true
			}
		}
		if improved {
			noChange = 0
		} else {
			noChange++
		}
		if len(next) == 0 {
			if empty++; empty >= h.MaxEmpty {
				break
			}
		} else {
			for len(next) < P {
				next = append(next, next[s.Rng.Intn(len(next))])
			}
			pop = next
		}
		if err != nil || noChange >= h.Patience {
			break
		}
	}
	return best
}

// mutate applies one mutation to every member (batched: first every
// restoration, then the synonym candidates of members whose restoration
// lost the flip).
func (h HLA) mutate(s *State, pop []Scored, count []int) ([]Scored, error) {
	out := append([]Scored(nil), pop...)
	idx := make([]int, len(pop))
	var restore [][]int32
	var who []int
	for k, m := range pop {
		var subs []int
		for _, i := range s.substituted(m.Seq) {
			if count[i] < h.MaxMutations {
				subs = append(subs, i)
			}
		}
		idx[k] = -1
		if len(subs) == 0 {
			continue
		}
		i := subs[s.Rng.Intn(len(subs))]
		count[i]++
		idx[k] = i
		q := append([]int32(nil), m.Seq...)
		q[i] = s.Orig[i]
		restore = append(restore, q)
		who = append(who, k)
	}
	res, err := s.Query(restore)
	if err != nil {
		return out, err
	}
	var syn [][]int32
	start := []int{0}
	var synWho []int
	for j, k := range who {
		if s.flipped(res[j]) {
			out[k] = res[j]
			continue
		}
		i := idx[k]
		base := h.windowSim(s, pop[k].Seq, i)
		type cand struct {
			q   []int32
			sim float64
		}
		var cs []cand
		for _, id := range s.Cands[i] {
			if id == pop[k].Seq[i] {
				continue
			}
			q := append([]int32(nil), pop[k].Seq...)
			q[i] = id
			if sim := h.windowSim(s, q, i); sim >= base {
				cs = append(cs, cand{q, sim})
			}
		}
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].sim > cs[b].sim })
		for _, c := range cs {
			syn = append(syn, c.q)
		}
		start = append(start, len(syn))
		synWho = append(synWho, k)
	}
	sres, err := s.Query(syn)
	for j, k := range synWho {
		for _, r := range sres[start[j]:start[j+1]] {
			if s.flipped(r) {
				out[k] = r
				break
			}
		}
	}
	return out, err
}

func buildHLA(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML || r.Nearest == nil {
		if err := needSynonyms(r, "hla"); err != nil {
			return nil, err
		}
	}
	if r.Encoder == nil {
		return nil, fmt.Errorf("recipe hla needs a sentence encoder: the Universal Sentence Encoder cannot run here; give --vectors FILE (mean word-vector cosine) or let the CLI use the model's embedding table")
	}
	var dev []string
	if !isUSE(r.Encoder) {
		dev = append(dev, useDeviation(r.Encoder, "HLA's similarity (restoration order, mutation choice, parent sampling)")+
			"; per FTML §14 A11 HLA results must be labelled as a deviation, not as reproduced")
	}
	h := DefaultHLA(r.Encoder)
	if protocol == ProtocolFTML {
		tr, pre := ftmlCommon(r)
		return &Configured{
			Attack: &Attack{Goal: HardLabel{}, Transformation: tr, Pre: pre, Search: h},
			Description: "HLA under the FTML protocol (§9): labels only, synonyms S (k=8, δ=0.5), 21 stop words, population 30, ≤ 100 generations, " +
				"success only with ≤ 25% words substituted",
			Deviations: append(dev, ftmlSampleNote),
		}, nil
	}
	subs, subDev := paperSubstitutes(r, 50, 0.5, "the 50 nearest with cosine ≥ 0.5",
		"substitutes: counter-fitted neighbour sets (k=8, cosine ≥ 0.75) instead of the 50 nearest counter-fitted neighbours")
	dev = appendDev(dev, subDev)
	return &Configured{
		Attack: &Attack{Goal: HardLabel{}, Transformation: WordSwap{subs},
			Pre:    []PreConstraint{StopWords{Set: lexicon.TextFooler(), Desc: "textfooler-266"}},
			Search: h},
		Description: "HLA (Maheshwary et al. 2021): labels only, random initialisation, search-space reduction, genetic optimisation (population 30, ≤ 100 generations)",
		Deviations:  append(dev, "stop words: the TextFooler list"),
	}, nil
}
