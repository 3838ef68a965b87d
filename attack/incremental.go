package attack

import "github.com/textarmor/textarmor/nn"

// IncrementalVictim is a victim that can score sequences close to a base
// sequence without a full forward pass ((*nn.Classifier) is one).
type IncrementalVictim interface {
	Victim
	NewIncremental() *nn.Incremental
}

// rebaseEdits is how many positions a query may differ from the cached base
// in and still count as close to it. When most of a batch is farther, the
// base moves: a close query costs the few windows or steps around its
// changes, a far one (still incremental) the span from its first change to
// its last.
const rebaseEdits = 16

// predict scores seqs with Target.Victim, taking the incremental path for
// those of the base's length and for the base with one token deleted.
// When most of a batch is not close to the base, the base moves to the
// batch's per-position majority (the current text of a greedy step, the
// common ancestor of a GA population). Results equal Predict's up to float
// rounding.
func (s *State) predict(seqs [][]int32) [][]float32 {
	iv, ok := s.Target.Victim.(IncrementalVictim)
	if !ok || s.Target.NoIncremental || len(seqs) == 0 {
		return s.Target.Victim.Predict(seqs)
	}
	if s.inc == nil {
		s.inc = iv.NewIncremental()
	}
	edits, near := s.editsFromBase(seqs)
	dels := s.deletionsFromBase(seqs)
	if (near+len(dels))*2 <= len(seqs) {
		s.inc.SetBase(majority(seqs))
		edits, near = s.editsFromBase(seqs)
		dels = s.deletionsFromBase(seqs)
	}
	out := make([][]float32, len(seqs))
	var far [][]int32
	var farAt, nearAt, delAt, delPos []int
	var nearEdits [][]nn.Swap
	for i, ed := range edits {
		if p, ok := dels[i]; ok {
			delAt, delPos = append(delAt, i), append(delPos, p)
			continue
		}
		if ed.ok {
			nearAt = append(nearAt, i)
			nearEdits = append(nearEdits, ed.swaps)
		} else {
			farAt = append(farAt, i)
			far = append(far, seqs[i])
		}
	}
	if len(nearEdits) > 0 {
		for j, p := range s.inc.PredictEdits(nearEdits) {
			out[nearAt[j]] = p
		}
	}
	if len(delPos) > 0 {
		for j, p := range s.inc.PredictDeletions(delPos) {
			out[delAt[j]] = p
		}
	}
	if len(far) > 0 {
		for j, p := range s.Target.Victim.Predict(far) {
			out[farAt[j]] = p
		}
	}
	return out
}

type edit struct {
	swaps []nn.Swap
	ok    bool
}

// editsFromBase diffs each sequence against the base (ok: the same
// length); near counts those within rebaseEdits.
func (s *State) editsFromBase(seqs [][]int32) (eds []edit, near int) {
	eds = make([]edit, len(seqs))
	base := s.inc.Base()
	if base == nil {
		return eds, 0
	}
	for i, q := range seqs {
		sw, ok := nn.Diff(base, q, len(q))
		if ok && len(q) == 0 {
			ok = false // an empty text has no base to edit
		}
		eds[i] = edit{sw, ok}
		if ok && len(sw) <= rebaseEdits {
			near++
		}
	}
	return eds, near
}

// deletionsFromBase maps the index of each sequence that is the base with
// one token removed (the delete order's queries) to the removed position,
// when the encoder scores deletions incrementally.
func (s *State) deletionsFromBase(seqs [][]int32) map[int]int {
	base := s.inc.Base()
	dels := map[int]int{}
	if !s.inc.FastDeletions() {
		return dels // the full forward pass scores them
	}
	for i, q := range seqs {
		if p, ok := nn.Deletion(base, q); ok {
			dels[i] = p
		}
	}
	return dels
}

// majority returns, position by position, the most common id among the
// sequences as long as the first (Boyer–Moore vote: exact when one id holds
// a majority, a plausible one otherwise).
func majority(seqs [][]int32) []int32 {
	n := len(seqs[0])
	out := make([]int32, n)
	count := make([]int, n)
	for _, q := range seqs {
		if len(q) != n {
			continue
		}
		for i, id := range q {
			switch {
			case count[i] == 0:
				out[i], count[i] = id, 1
			case out[i] == id:
				count[i]++
			default:
				count[i]--
			}
		}
	}
	return out
}
