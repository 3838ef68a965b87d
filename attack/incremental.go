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
	if s.incremental() == nil || len(seqs) == 0 {
		return s.victimPredict(seqs)
	}
	if s.phrases != nil {
		// A phrase changes the length the model reads: those candidates
		// take the full path, the others the incremental one.
		var with, without []int
		for i, q := range seqs {
			if s.hasPhrase(q) {
				with = append(with, i)
			} else {
				without = append(without, i)
			}
		}
		if len(with) > 0 {
			out := make([][]float32, len(seqs))
			scatter(out, with, s.victimPredict(gather(seqs, with)))
			if len(without) > 0 {
				scatter(out, without, s.predictNear(gather(seqs, without)))
			}
			return out
		}
	}
	return s.predictNear(seqs)
}

// gather picks seqs[i] for each i of at.
func gather(seqs [][]int32, at []int) [][]int32 {
	out := make([][]int32, len(at))
	for j, i := range at {
		out[j] = seqs[i]
	}
	return out
}

// scatter puts probs[j] at out[at[j]].
func scatter(out [][]float32, at []int, probs [][]float32) {
	for j, p := range probs {
		out[at[j]] = p
	}
}

// predictNear is predict for sequences without phrases.
func (s *State) predictNear(seqs [][]int32) [][]float32 {
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
		for j, p := range s.victimPredict(far) {
			out[farAt[j]] = p
		}
	}
	return out
}

// incremental returns the state's incremental evaluator, nil when the
// victim has none or the fast path is off.
func (s *State) incremental() *nn.Incremental {
	iv, ok := s.Target.Victim.(IncrementalVictim)
	if !ok || s.Target.NoIncremental || s.Target.Encode != nil {
		return nil
	}
	if s.inc == nil {
		s.inc = iv.NewIncremental()
	}
	return s.inc
}

// QueryFamilies scores parents and kids as Query(parents) followed by
// Query(kids) would (the same results up to float rounding, the same
// queries, cache and budget), where kids[j] is parents[of[j]] with a few
// words swapped: a GA perturbation step, each child and its one-word
// substitutes. On recurrent victims the uncached ones go through one
// family sweep (nn.Incremental.PredictFamilies), in which a kid costs the
// steps from its change on instead of its distance from a shared base
// (BenchmarkPredictFamilies: 1.5–1.7×). When the parents alone exceed the
// budget, kids is not scored (nil).
func (s *State) QueryFamilies(parents, kids [][]int32, of []int) ([]Scored, []Scored, error) {
	inc := s.incremental()
	// The family sweep reads every sequence as the model does only when no
	// phrase changes its length; Query routes phrases to the full path.
	if inc == nil || !inc.FamilySweep() || !sameLength(parents) || s.anyPhrase(parents) || s.anyPhrase(kids) {
		ps, err := s.Query(parents)
		if err != nil {
			return ps, nil, err
		}
		ks, err := s.Query(kids)
		return ps, ks, err
	}
	pending := map[string]bool{}
	newParents := s.uncached(parents, pending)
	if b := s.attack.QueryBudget; b > 0 && s.Queries+len(newParents) > b {
		ps, err := s.Query(parents) // cuts them and reports it
		return ps, nil, err
	}
	newKids, err := s.withinBudget(s.uncached(kids, pending), len(newParents))
	// Rows: the new parents, then the parent of every new kid once.
	var bases [][]int32
	row := map[string]int{}
	addBase := func(q []int32) int {
		k := key(q)
		r, ok := row[k]
		if !ok {
			r = len(bases)
			row[k] = r
			bases = append(bases, q)
		}
		return r
	}
	for _, q := range newParents {
		addBase(q)
	}
	parentOf := map[string]int{}
	for j, q := range kids {
		parentOf[key(q)] = of[j]
	}
	var edits [][]nn.Swap
	var edOf []int
	var far [][]int32 // a kid of another length than its parent
	var near [][]int32
	for _, q := range newKids {
		p := parents[parentOf[key(q)]]
		sw, ok := nn.Diff(p, q, len(q))
		if !ok {
			far = append(far, q)
			continue
		}
		near = append(near, q)
		edits, edOf = append(edits, sw), append(edOf, addBase(p))
	}
	if len(bases) > 0 {
		bp, ep := inc.PredictFamilies(bases, edOf, edits)
		s.store(newParents, bp[:len(newParents)])
		s.store(near, ep)
	}
	if len(far) > 0 {
		s.store(far, s.victimPredict(far))
	}
	return s.lookup(parents), s.lookup(kids), err
}

// sameLength reports whether the sequences share one length.
func sameLength(seqs [][]int32) bool {
	for _, q := range seqs {
		if len(q) != len(seqs[0]) {
			return false
		}
	}
	return true
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
