package attack

import (
	"fmt"
	"sort"
)

// Beam is TextAttack's beam search: keep the Width best texts; at each step
// score every one-word substitution of each of them (at positions the
// pre-constraints still allow) and keep the Width best distinct ones; stop
// when the goal is reached or nothing can change. Width 1 is TextAttack's
// greedy search (which, unlike Greedy, rescans every position each step).
//
// TextAttack loops until no substitution is left, which never happens
// without a no-repeat constraint; here the search also stops after as many
// steps as there are attackable positions (a text cannot differ from the
// original in more). It returns the highest-scoring text seen.
type Beam struct{ Width int }

// Name implements Search.
func (b Beam) Name() string { return fmt.Sprintf("beam(width=%d)", max(b.Width, 1)) }

// Search implements Search.
func (b Beam) Search(s *State) Scored {
	width := max(b.Width, 1)
	steps := 0
	for i := range s.Orig {
		if s.Allowed(s.Orig, i) {
			steps++
		}
	}
	beam := []Scored{s.Initial}
	best := s.Initial
	for step := 0; step < steps; step++ {
		var next [][]int32
		for _, m := range beam {
			for i := range m.Seq {
				if s.Allowed(m.Seq, i) {
					next = append(next, s.Substitutes(m.Seq, i)...)
				}
			}
		}
		if len(next) == 0 {
			return best
		}
		res, err := s.Query(next)
		scored := res[:0]
		for _, r := range res {
			if r.Probs != nil {
				scored = append(scored, r)
			}
		}
		if c := bestOf(scored); c.Probs != nil && (c.Achieved || c.Score > best.Score) {
			best = c
		}
		if best.Achieved || err != nil {
			return best
		}
		sort.SliceStable(scored, func(i, j int) bool { return scored[i].Score > scored[j].Score })
		beam = beam[:0]
		seen := map[string]bool{}
		for _, r := range scored {
			if k := key(r.Seq); !seen[k] && len(beam) < width {
				seen[k] = true
				beam = append(beam, r)
			}
		}
	}
	return best
}
