package attack

import (
	"fmt"
	"math"
	"sort"

	"github.com/textarmor/textarmor/text"
)

// Search explores substitutions and returns the best candidate it found
// (Achieved set when it succeeded). It may return early once the query
// budget is spent (State.Exhausted).
type Search interface {
	Name() string
	Search(s *State) Scored
}

// Order is how Greedy ranks positions.
type Order int

// Word-importance orderings.
const (
	// ByDelete ranks by the goal score gained when the word is deleted
	// (TextFooler).
	ByDelete Order = iota
	// ByUnk ranks by the score gained when the word becomes UNK.
	ByUnk
	// ByPWWS ranks by softmax(UNK saliency) × the goal score after the
	// position's best single substitution, as TextAttack's
	// weighted-saliency order does (Greedy.PWWSGain: × the gain over the
	// original score, as Ren et al. 2019 write it).
	ByPWWS
	// ByRandom visits positions in random order.
	ByRandom
	// ByGradient ranks by the L1 norm of the loss gradient with respect
	// to the word's embedding (TextAttack's "gradient"); it needs
	// Target.InputGrad and costs no query.
	ByGradient
)

func (o Order) String() string {
	switch o {
	case ByDelete:
		return "delete"
	case ByUnk:
		return "unk"
	case ByPWWS:
		return "pwws"
	case ByRandom:
		return "random"
	case ByGradient:
		return "gradient"
	}
	return fmt.Sprintf("order(%d)", int(o))
}

// Greedy is greedy search by word importance: rank the attackable
// positions, then visit them in order, substituting at each the candidate
// that raises the goal score most (if it raises it at all), until the goal
// is reached.
type Greedy struct {
	Order Order
	// ReuseBest applies at each ranked position the best substitute found
	// while ranking (PWWS as Ren et al. and FTML §9 describe it), instead of
	// re-scoring that position's substitutes on the current text
	// (TextAttack's greedy-WIR). Only meaningful with ByPWWS.
	ReuseBest bool
	// PWWSGain weighs each position by its best substitution's gain over
	// the original score (Ren et al. 2019's ΔP, FTML §9) instead of the
	// score after that substitution (TextAttack's code). The two differ by
	// a constant times the softmax weight, so they can order positions
	// differently. Only meaningful with ByPWWS.
	PWWSGain bool
}

// Name implements Search.
func (g Greedy) Name() string {
	n := "greedy-wir(" + g.Order.String()
	if g.ReuseBest {
		n += ",reuse-best"
	}
	if g.PWWSGain {
		n += ",gain"
	}
	return n + ")"
}

// Search implements Search.
func (g Greedy) Search(s *State) Scored {
	cur := s.Initial
	var pos []int
	for i := range s.Orig {
		if s.Allowed(s.Orig, i) {
			pos = append(pos, i)
		}
	}
	imp := make([]float64, len(pos))
	bestSub := make([]int32, len(pos))
	switch g.Order {
	case ByRandom:
		s.Rng.Shuffle(len(pos), func(a, b int) { pos[a], pos[b] = pos[b], pos[a] })
	case ByGradient:
		// TextAttack differentiates the loss of the predicted class.
		var g []float64
		if s.Target.Encode != nil {
			g = s.Target.TextGrad(s.text, s.Initial.Pred)
		} else {
			g = s.Target.InputGrad(s.Orig, s.Initial.Pred)
		}
		for k, i := range pos {
			if i < len(g) {
				imp[k] = g[i]
			}
		}
	case ByDelete, ByUnk:
		seqs := make([][]int32, len(pos))
		for k, i := range pos {
			if g.Order == ByDelete {
				seqs[k] = append(append([]int32(nil), s.Orig[:i]...), s.Orig[i+1:]...)
			} else {
				seqs[k] = append([]int32(nil), s.Orig...)
				seqs[k][i] = text.UnkID
			}
		}
		res, err := s.Query(seqs)
		if err != nil {
			return cur
		}
		for k := range pos {
			imp[k] = res[k].Score - s.Initial.Score
		}
	case ByPWWS:
		// One batch: every UNK replacement and every single substitution.
		var seqs [][]int32
		start := make([]int, len(pos)+1)
		for k, i := range pos {
			u := append([]int32(nil), s.Orig...)
			u[i] = text.UnkID
			seqs = append(seqs, u)
			seqs = append(seqs, s.Substitutes(s.Orig, i)...)
			start[k+1] = len(seqs)
		}
		res, err := s.Query(seqs)
		if err != nil {
			return cur
		}
		sal := make([]float64, len(pos))
		delta := make([]float64, len(pos))
		base := 0.0 // TextAttack weighs by the score itself
		if g.PWWSGain {
			base = s.Initial.Score
		}
		for k, i := range pos {
			sal[k] = res[start[k]].Score - s.Initial.Score // softmax ignores the shift
			delta[k] = math.Inf(-1)
			for j := start[k] + 1; j < start[k+1]; j++ {
				if d := res[j].Score - base; d > delta[k] {
					delta[k], bestSub[k] = d, res[j].Seq[i]
				}
			}
			if math.IsInf(delta[k], -1) {
				delta[k] = 0
			}
		}
		soft := softmax(sal, 1)
		for k := range pos {
			imp[k] = delta[k] * soft[k]
		}
	}
	if g.Order != ByRandom {
		idx := make([]int, len(pos))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return imp[idx[a]] > imp[idx[b]] })
		p2, b2 := make([]int, len(pos)), make([]int32, len(pos))
		for k, j := range idx {
			p2[k], b2[k] = pos[j], bestSub[j]
		}
		pos, bestSub = p2, b2
	}
	for k, i := range pos {
		subs := s.Substitutes(cur.Seq, i)
		if len(subs) == 0 {
			continue
		}
		if g.ReuseBest && g.Order == ByPWWS {
			var pick [][]int32
			for _, q := range subs {
				if q[i] == bestSub[k] {
					pick = append(pick, q)
				}
			}
			if len(pick) == 0 {
				continue
			}
			res, err := s.Query(pick)
			if err != nil && res[0].Probs == nil {
				return cur
			}
			cur = res[0]
		} else {
			res, err := s.Query(subs)
			b := bestOf(res)
			if b.Probs != nil && b.Score > cur.Score || b.Achieved {
				cur = b
			}
			if err != nil {
				return cur
			}
		}
		if cur.Achieved {
			return cur
		}
	}
	return cur
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

// Genetic is Alzantot et al.'s (2018) genetic algorithm as FTML §9 states
// it: population PopSize, Generations generations, fitness 1 − p_y (the
// goal score), parents sampled by softmax(fitness/Temp), uniform
// crossover, every child perturbed, the elite kept.
type Genetic struct {
	PopSize, Generations int
	Temp                 float64 // 0.3
	MaxSynonyms          int     // position weights cap: 10
}

// Name implements Search.
func (g Genetic) Name() string {
	return fmt.Sprintf("genetic(pop=%d,gens=%d)", g.PopSize, g.Generations)
}

// Search implements Search.
func (g Genetic) Search(s *State) Scored {
	P := max(g.PopSize, 1)
	init := make([][]int32, P)
	for k := range init {
		init[k] = s.Orig
	}
	pop, err := perturbAll(s, init, g.MaxSynonyms)
	for gen := 0; ; gen++ {
		if b, ok := firstAchieved(pop); ok {
			return b
		}
		best := bestOf(pop)
		if err != nil || gen >= g.Generations {
			if best.Probs == nil {
				return s.Initial
			}
			return best
		}
		fit := make([]float64, P)
		for k, m := range pop {
			fit[k] = m.Score
		}
		prob := softmax(fit, g.Temp)
		children := make([][]int32, 0, P-1)
		for c := 1; c < P; c++ {
			children = append(children, crossover(s, pop, prob))
		}
		var next []Scored
		next, err = perturbAll(s, children, g.MaxSynonyms)
		pop = append([]Scored{best}, next...)
	}
}

// crossover samples two parents from pop with probabilities prob and takes
// each position from either with probability 1/2 (uniform crossover).
func crossover(s *State, pop []Scored, prob []float64) []int32 {
	p1, p2 := pop[sample(s, prob)].Seq, pop[sample(s, prob)].Seq
	child := make([]int32, len(p1))
	for i := range child {
		if s.Rng.Float64() < 0.5 {
			child[i] = p1[i]
		} else {
			child[i] = p2[i]
		}
	}
	return child
}

// PSO is Zang et al.'s (2020) particle swarm search as FTML §9 states it:
// swarm PopSize, Iterations iterations, velocities U(−VMax, VMax), inertia
// ω from Omega1 down to Omega2, C1 from C1 to C2 (probability of moving to
// the personal best) and C2 the other way (to the global best), mutation
// with probability 1 − 2·R(x, particle).
type PSO struct {
	PopSize, Iterations int
	Omega1, Omega2      float64 // 0.8, 0.2
	C1, C2              float64 // 0.8, 0.2
	VMax                float64 // 3
	MaxSynonyms         int     // 10, as in the GA perturbation
}

// Name implements Search.
func (p PSO) Name() string { return fmt.Sprintf("pso(pop=%d,iters=%d)", p.PopSize, p.Iterations) }

// Search implements Search.
func (p PSO) Search(s *State) Scored {
	P, n := max(p.PopSize, 1), len(s.Orig)
	init := make([][]int32, P)
	for k := range init {
		init[k] = s.Orig
	}
	pop, err := perturbAll(s, init, p.MaxSynonyms)
	if b, ok := firstAchieved(pop); ok {
		return b
	}
	if err != nil {
		return bestOrInitial(s, pop)
	}
	V := make([][]float64, P)
	for k := range V {
		V[k] = make([]float64, n)
		for i := range V[k] {
			V[k][i] = (2*s.Rng.Float64() - 1) * p.VMax
		}
	}
	pbest := append([]Scored(nil), pop...)
	gbest := bestOf(pop)
	eq := func(a, b int32) float64 {
		if a == b {
			return -p.VMax
		}
		return p.VMax
	}
	T := float64(p.Iterations)
	for it := 0; it < p.Iterations; it++ {
		omega := (p.Omega1-p.Omega2)*(T-float64(it))/T + p.Omega2
		c1 := p.C1 - float64(it+1)/T*(p.C1-p.C2)
		c2 := p.C2 + float64(it+1)/T*(p.C1-p.C2)
		seqs := make([][]int32, P)
		for k := range pop {
			x := append([]int32(nil), pop[k].Seq...)
			turn := make([]float64, n)
			for i := range x {
				V[k][i] = omega*V[k][i] + (1-omega)*(eq(x[i], pbest[k].Seq[i])+eq(x[i], gbest.Seq[i]))
				turn[i] = 1 / (1 + math.Exp(-V[k][i]))
			}
			if s.Rng.Float64() < c1 {
				moveToward(s, x, pbest[k].Seq, turn)
			}
			if s.Rng.Float64() < c2 {
				moveToward(s, x, gbest.Seq, turn)
			}
			seqs[k] = x
		}
		pop, err = s.Query(seqs)
		if b, ok := firstAchieved(pop); ok {
			return b
		}
		if err != nil {
			return bestOrInitial(s, append(pbest, gbest))
		}
		// Mutation.
		var idx []int
		var mut [][]int32
		for k := range pop {
			r := float64(s.Modified(pop[k].Seq)) / float64(s.NumWords)
			if s.Rng.Float64() < 1-2*r {
				idx = append(idx, k)
				mut = append(mut, pop[k].Seq)
			}
		}
		m, err := perturbAll(s, mut, p.MaxSynonyms)
		for j, k := range idx {
			if m[j].Probs != nil {
				pop[k] = m[j]
			}
		}
		if b, ok := firstAchieved(pop); ok {
			return b
		}
		if err != nil {
			return bestOrInitial(s, append(pbest, gbest))
		}
		for k := range pop {
			if pop[k].Score > pbest[k].Score {
				pbest[k] = pop[k]
			}
			if pop[k].Score > gbest.Score {
				gbest = pop[k]
			}
		}
	}
	return gbest
}

func moveToward(s *State, x, elite []int32, turn []float64) {
	for i := range x {
		if s.Rng.Float64() < turn[i] {
			x[i] = elite[i]
		}
	}
}

func bestOrInitial(s *State, pop []Scored) Scored {
	if b := bestOf(pop); b.Probs != nil {
		return b
	}
	return s.Initial
}
