package attack

import "math"

// Search explores substitutions and returns the best candidate it found
// (Achieved set when it succeeded). It may return early once the query
// budget is spent (State.Exhausted).
type Search interface {
	Name() string
	Search(s *State) Scored
}

// bestOf returns the achieved candidate with the highest score if any,
// else the highest-scoring one (the first on ties).
func bestOf(res []Scored) Scored {
	var b Scored
	found := false
	for _, r := range res {
		if r.Probs == nil {
			continue
		}
		if !found || (r.Achieved && !b.Achieved) || (r.Achieved == b.Achieved && r.Score > b.Score) {
			b, found = r, true
		}
	}
	return b
}

func softmax(x []float64, temp float64) []float64 {
	out := make([]float64, len(x))
	if len(x) == 0 {
		return out
	}
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v/temp)
	}
	var sum float64
	for i, v := range x {
		out[i] = math.Exp(v/temp - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// sample draws an index with probability proportional to w (w sums > 0).
func sample(s *State, w []float64) int {
	var sum float64
	for _, v := range w {
		sum += v
	}
	r := s.Rng.Float64() * sum
	for i, v := range w {
		r -= v
		if r < 0 && v > 0 {
			return i
		}
	}
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] > 0 {
			return i
		}
	}
	return 0
}

// perturbAll applies Alzantot's Perturb to every sequence: sample an
// unmodified position with probability ∝ min(|S(w_i)|, maxSyn), try every
// substitute there and keep the one that raises the score most (keep the
// sequence when none does). All sequences and all substitutes are scored
// together (State.QueryFamilies).
func perturbAll(s *State, seqs [][]int32, maxSyn int) ([]Scored, error) {
	start := make([]int, len(seqs)+1)
	var subs [][]int32
	var of []int
	for k, q := range seqs {
		w := make([]float64, len(q))
		any := false
		for i := range q {
			if q[i] == s.Orig[i] && s.Allowed(q, i) {
				w[i] = float64(min(len(s.Cands[i]), maxSyn))
				any = true
			}
		}
		if any {
			subs = append(subs, s.Substitutes(q, sample(s, w))...)
		}
		for len(of) < len(subs) {
			of = append(of, k)
		}
		start[k+1] = len(subs)
	}
	base, res, err := s.QueryFamilies(seqs, subs, of)
	if res == nil {
		return base, err
	}
	out := make([]Scored, len(seqs))
	for k := range seqs {
		out[k] = base[k]
		if b := bestOf(res[start[k]:start[k+1]]); b.Probs != nil && (b.Score > base[k].Score || b.Achieved) {
			out[k] = b
		}
	}
	return out, err
}

// firstAchieved returns the achieved member with the highest score.
func firstAchieved(pop []Scored) (Scored, bool) {
	b := bestOf(pop)
	return b, b.Achieved
}

func bestOrInitial(s *State, pop []Scored) Scored {
	if b := bestOf(pop); b.Probs != nil {
		return b
	}
	return s.Initial
}
