package attack

import (
	"sync"

	"github.com/textarmor/textarmor/nn"
)

// mergingVictim merges the concurrent Predict calls of RunAll's workers
// into one call of the underlying victim: a call waits until every worker
// still running is waiting too (or has left), and the last one to arrive
// scores all their sequences in one batch. Each worker is either computing,
// and will call Predict or leave, or waiting, so the merge always happens.
// Per-sequence results are the victim's: Predict's rows do not depend on
// the other sequences of the batch beyond float rounding.
type mergingVictim struct {
	v       Victim
	mu      sync.Mutex
	active  int // workers that may still call Predict
	pending []*mergeReq
	// calls and merged count the underlying Predict calls and the worker
	// calls they served.
	calls, merged int
}

type mergeReq struct {
	seqs [][]int32
	out  [][]float32
	done chan struct{}
}

// mergingIncVictim keeps the incremental fast path of the victim visible.
type mergingIncVictim struct {
	*mergingVictim
	iv IncrementalVictim
}

func (m mergingIncVictim) NewIncremental() *nn.Incremental { return m.iv.NewIncremental() }

// mergeTarget wraps t's victim for workers workers; each worker calls the
// returned leave when it stops.
func mergeTarget(t Target, workers int) (Target, *mergingVictim) {
	m := &mergingVictim{v: t.Victim, active: workers}
	if iv, ok := t.Victim.(IncrementalVictim); ok {
		t.Victim = mergingIncVictim{m, iv}
	} else {
		t.Victim = m
	}
	return t, m
}

func (m *mergingVictim) Predict(seqs [][]int32) [][]float32 {
	if len(seqs) == 0 {
		return m.v.Predict(seqs)
	}
	r := &mergeReq{seqs: seqs, done: make(chan struct{})}
	m.mu.Lock()
	m.pending = append(m.pending, r)
	batch := m.takeLocked()
	m.mu.Unlock()
	m.run(batch)
	<-r.done
	return r.out
}

// leave marks a worker as finished; the others may now be all waiting.
func (m *mergingVictim) leave() {
	m.mu.Lock()
	m.active--
	batch := m.takeLocked()
	m.mu.Unlock()
	m.run(batch)
}

// takeLocked returns the pending calls when every active worker is
// waiting.
func (m *mergingVictim) takeLocked() []*mergeReq {
	if len(m.pending) == 0 || len(m.pending) < m.active {
		return nil
	}
	b := m.pending
	m.pending = nil
	m.calls++
	m.merged += len(b)
	return b
}

func (m *mergingVictim) run(batch []*mergeReq) {
	if len(batch) == 0 {
		return
	}
	var all [][]int32
	for _, r := range batch {
		all = append(all, r.seqs...)
	}
	probs := m.v.Predict(all)
	for _, r := range batch {
		r.out, probs = probs[:len(r.seqs):len(r.seqs)], probs[len(r.seqs):]
		close(r.done)
	}
}
