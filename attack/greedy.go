package attack

import (
	"fmt"
	"math"
	"sort"

	"github.com/textarmor/textarmor/text"
)

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
