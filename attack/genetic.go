package attack

import (
	"fmt"
)

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
