package attack

import (
	"fmt"
	"math"
)

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
