package attack

import (
	"fmt"

	"github.com/textarmor/textarmor/lexicon"
)

// IGA is the improved genetic algorithm of Wang, Jin & He (2019; used as
// an attack in Wang et al. 2021), as TextAttack's
// ImprovedGeneticAlgorithm implements it. Differences from Genetic
// (Alzantot et al. 2018):
//
//   - initial population: for each attackable position in text order, the
//     original text with that position replaced by its best substitute
//     (the first PopSize such members; fewer for short texts);
//   - mutation may pick any position, including one already substituted (a
//     substituted position may also go back to its original word); each
//     position may be replaced at most MaxReplace times per lineage;
//   - crossover cuts both parents at one random point (prefix of the first,
//     suffix of the second) instead of a uniform mix.
//
// As in Genetic, parents are sampled by softmax(score/Temp) and the elite
// is kept. The maximum modification rate is a pre-constraint on new
// positions and a final constraint on the result.
type IGA struct {
	PopSize, Generations int
	Temp                 float64 // 0.3
	MaxReplace           int     // per position: 5
}

// Name implements Search.
func (g IGA) Name() string {
	return fmt.Sprintf("iga(pop=%d,gens=%d,max-replace=%d)", g.PopSize, g.Generations, g.MaxReplace)
}

type igaMember struct {
	r    Scored
	left []int // replacements left per position
}

// Search implements Search.
func (g IGA) Search(s *State) Scored {
	n := len(s.Orig)
	left0 := make([]int, n)
	for i := range left0 {
		left0[i] = g.MaxReplace
	}
	// Initial population: every position's best substitute, one batch.
	var pos []int
	for i := 0; i < n && len(pos) < g.PopSize; i++ {
		if s.Allowed(s.Orig, i) {
			pos = append(pos, i)
		}
	}
	start := make([]int, len(pos)+1)
	var seqs [][]int32
	for k, i := range pos {
		seqs = append(seqs, s.Substitutes(s.Orig, i)...)
		start[k+1] = len(seqs)
	}
	res, err := s.Query(seqs)
	var pop []igaMember
	for k, i := range pos {
		m := igaMember{r: s.Initial, left: append([]int(nil), left0...)}
		if b := bestOf(res[start[k]:start[k+1]]); b.Probs != nil && b.Score > s.Initial.Score {
			m.r = b
			m.left[i]--
		}
		pop = append(pop, m)
	}
	if len(pop) == 0 {
		return s.Initial
	}
	P := len(pop)
	for gen := 0; ; gen++ {
		best := 0
		for k := range pop {
			if better(pop[k].r, pop[best].r) {
				best = k
			}
		}
		if pop[best].r.Achieved || err != nil || gen >= g.Generations {
			return pop[best].r
		}
		fit := make([]float64, P)
		for k, m := range pop {
			fit[k] = m.r.Score
		}
		prob := softmax(fit, g.Temp)
		children := make([]igaMember, 0, P-1)
		for c := 1; c < P; c++ {
			a, b := pop[sample(s, prob)], pop[sample(s, prob)]
			cut := s.Rng.Intn(n)
			child := igaMember{r: Scored{Seq: make([]int32, n)}, left: make([]int, n)}
			copy(child.r.Seq, a.r.Seq[:cut])
			copy(child.r.Seq[cut:], b.r.Seq[cut:])
			copy(child.left, a.left[:cut])
			copy(child.left[cut:], b.left[cut:])
			children = append(children, child)
		}
		children, err = g.perturb(s, children)
		pop = append([]igaMember{pop[best]}, children...)
	}
}

// better orders candidates: achieved first, then by score.
func better(a, b Scored) bool {
	if a.Achieved != b.Achieved {
		return a.Achieved
	}
	return a.Score > b.Score
}

// perturb mutates every member: sample a position uniformly among those
// with replacements left that may change, try every substitute there (the
// original word included when the position is substituted) and keep the
// best if it raises the score; otherwise that position is spent for this
// member and another is tried, up to the number of eligible positions.
// Members are handled together, one model call per round.
func (g IGA) perturb(s *State, ms []igaMember) ([]igaMember, error) {
	seqs := make([][]int32, len(ms))
	for k := range ms {
		seqs[k] = ms[k].r.Seq
	}
	base, err := s.Query(seqs)
	if err != nil {
		return ms, err
	}
	type job struct {
		k     int
		left  []int // scratch copy: spent positions are zeroed
		tries int
	}
	var jobs []*job
	for k := range ms {
		ms[k].r = base[k]
		jobs = append(jobs, &job{k: k, left: append([]int(nil), ms[k].left...)})
	}
	for len(jobs) > 0 {
		var batch [][]int32
		var owners []*job
		var at []int
		start := []int{0}
		var next []*job
		for _, j := range jobs {
			m := &ms[j.k]
			var w []float64
			any := false
			for i := range m.r.Seq {
				v := 0.0
				if j.left[i] > 0 && s.Allowed(m.r.Seq, i) {
					v, any = 1, true
				}
				w = append(w, v)
			}
			if !any || j.tries >= len(m.r.Seq) {
				continue
			}
			i := sample(s, w)
			j.tries++
			subs := s.Substitutes(m.r.Seq, i)
			if m.r.Seq[i] != s.Orig[i] {
				q := append([]int32(nil), m.r.Seq...)
				q[i] = s.Orig[i]
				subs = append(subs, q)
			}
			batch = append(batch, subs...)
			start = append(start, len(batch))
			owners = append(owners, j)
			at = append(at, i)
		}
		if len(owners) == 0 {
			break
		}
		res, err := s.Query(batch)
		for o, j := range owners {
			m := &ms[j.k]
			i := at[o]
			b := bestOf(res[start[o]:start[o+1]])
			if b.Probs != nil && (b.Score > m.r.Score || b.Achieved && !m.r.Achieved) {
				m.r = b
				m.left[i]--
				continue
			}
			j.left[i] = 0
			next = append(next, j)
		}
		if err != nil {
			return ms, err
		}
		jobs = next
	}
	return ms, nil
}

func buildIGA(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML || r.Nearest == nil {
		if err := needSynonyms(r, "iga"); err != nil {
			return nil, err
		}
	}
	iga := IGA{PopSize: 60, Generations: 20, Temp: 0.3, MaxReplace: 5}
	if protocol == ProtocolFTML {
		tr, pre := ftmlCommon(r)
		return &Configured{
			Attack: &Attack{Goal: Untargeted{}, Transformation: tr, Pre: pre, Search: iga},
			Description: "IGA with the FTML protocol's shared settings (§9/§13): synonyms S (k=8, δ=0.5), 21 stop words, success only with ≤ 25% words substituted; " +
				"population 60, 20 generations, ≤ 5 replacements per position",
			Deviations: []string{"IGA is not one of FTML's four evaluation attacks; this composes it with FTML's shared attack settings", ftmlSampleNote},
		}, nil
	}
	subs, subDev := paperSubstitutes(r, 50, 0.75, "the 50 nearest with squared distance ≤ 0.5 (cosine ≥ 0.75 for unit vectors)",
		"substitutes: counter-fitted neighbour sets (k=8, squared distance ≤ 0.5) instead of the 50 nearest counter-fitted neighbours")
	dev := appendDev(nil, subDev, "stop words: the TextFooler list")
	var post []PostConstraint
	if r.Distance != nil {
		// Squared distance ≤ 0.5 on unit vectors is cosine ≥ 0.75.
		post = append(post, WordEmbeddingDistance{Space: r.Distance, Max: 0.25})
	} else {
		dev = append(dev, "squared embedding distance ≤ 0.5 enforced by the neighbour sets themselves, not re-checked")
	}
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: WordSwap{subs},
			Pre: []PreConstraint{StopWords{Set: lexicon.TextFooler(), Desc: "textfooler-266"},
				MaxModificationRate{Rate: 0.2, MinWords: 1, Ceil: true}},
			Post:   post,
			Search: iga},
		Description: "IGA as TextAttack's iga recipe: population 60, 20 generations, ≤ 5 replacements per position, single-point crossover, ≤ 20% words, stop words",
		Deviations:  dev,
	}, nil
}
