package defense

import (
	"fmt"
	"math"
	"sort"

	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// EmbeddingNeighbors are each word's K nearest words by cosine in the
// model's own embedding table, as SPGD and iAdvT-Text need them (spgd.md
// §3.1): candidates are the real words (not <pad>, <unk> or the word
// itself), sorted by decreasing cosine (ties: smaller id first). The
// embedding table moves during training, so the table follows it: every
// Refresh training steps a snapshot of the (row-normalised) table is taken
// and the neighbours of each word are computed lazily against that
// snapshot, once per snapshot. The snapshot is the objective's checkpoint
// state, so a resumed run sees the neighbours an uninterrupted one would.
type EmbeddingNeighbors struct {
	K, Refresh int
	// version is the snapshot's number: the step it was taken at / Refresh.
	version int
	snap    []float32 // rows × dim, each row of unit length (or zero)
	rows    int
	dim     int
	cache   map[int32][]int32
}

// NewEmbeddingNeighbors returns a table of k neighbours per word,
// refreshed every refresh steps.
func NewEmbeddingNeighbors(k, refresh int) (*EmbeddingNeighbors, error) {
	if k < 1 || refresh < 1 {
		return nil, fmt.Errorf("defense: %d neighbours refreshed every %d steps: both must be at least 1", k, refresh)
	}
	return &EmbeddingNeighbors{K: k, Refresh: refresh, version: -1}, nil
}

// Version is the number of the snapshot the neighbours come from (-1
// before the first).
func (n *EmbeddingNeighbors) Version() int { return n.version }

// AtStep takes a new snapshot of table w ([V, D]) when step enters a new
// Refresh window (and at the first call), and keeps the current one
// otherwise.
func (n *EmbeddingNeighbors) AtStep(step int, w *tensor.Tensor) {
	if v := step / n.Refresh; v != n.version || n.snap == nil {
		n.Snapshot(w, v)
	}
}

// Snapshot takes the neighbours from table w from now on, as snapshot
// number version.
func (n *EmbeddingNeighbors) Snapshot(w *tensor.Tensor, version int) {
	n.rows, n.dim = w.Shape[0], w.Shape[1]
	n.snap = make([]float32, len(w.Data))
	for r := range n.rows {
		row := w.Data[r*n.dim : (r+1)*n.dim]
		var ss float64
		for _, x := range row {
			ss += float64(x) * float64(x)
		}
		if ss == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(ss))
		for j, x := range row {
			n.snap[r*n.dim+j] = x * inv
		}
	}
	n.version, n.cache = version, map[int32][]int32{}
}

// Of returns the neighbours of each id (nil for <pad>, <unk> and ids
// outside the table), computing the missing ones with one product.
func (n *EmbeddingNeighbors) Of(ids []int32) [][]int32 {
	var missing []int32
	seen := map[int32]bool{}
	for _, id := range ids {
		if _, ok := n.cache[id]; !ok && n.word(id) && !seen[id] {
			missing, seen[id] = append(missing, id), true
		}
	}
	if len(missing) > 0 {
		q := make([]float32, len(missing)*n.dim)
		for i, id := range missing {
			copy(q[i*n.dim:], n.snap[int(id)*n.dim:(int(id)+1)*n.dim])
		}
		sims := make([]float32, len(missing)*n.rows)
		tensor.Gemm(false, true, len(missing), n.rows, n.dim, 1, q, n.dim, n.snap, n.dim, 0, sims, n.rows)
		for i, id := range missing {
			n.cache[id] = n.top(id, sims[i*n.rows:(i+1)*n.rows])
		}
	}
	out := make([][]int32, len(ids))
	for i, id := range ids {
		out[i] = n.cache[id]
	}
	return out
}

// word reports whether id is a real word of the table.
func (n *EmbeddingNeighbors) word(id int32) bool {
	return id != text.PadID && id != text.UnkID && id >= 0 && int(id) < n.rows
}

// top picks the K most similar real words other than id, by insertion
// into a sorted list of K (a word enters only above the K-th).
func (n *EmbeddingNeighbors) top(id int32, sims []float32) []int32 {
	best := make([]int32, 0, n.K+1)
	for c := range int32(n.rows) {
		if c == id || !n.word(c) || (len(best) == n.K && sims[c] <= sims[best[n.K-1]]) {
			continue
		}
		at := sort.Search(len(best), func(i int) bool { return sims[best[i]] < sims[c] })
		best = append(best, 0)
		copy(best[at+1:], best[at:])
		best[at] = c
		if len(best) > n.K {
			best = best[:n.K]
		}
	}
	return best
}

// State is the snapshot and its number, for checkpoints.
func (n *EmbeddingNeighbors) State() map[string]*tensor.Tensor {
	if n.snap == nil {
		return nil
	}
	return map[string]*tensor.Tensor{"neighbors.snapshot": tensor.From(n.snap, n.rows, n.dim),
		"neighbors.version": tensor.From([]float32{float32(n.version)}, 1)}
}

// SetState restores State (nil: no snapshot yet).
func (n *EmbeddingNeighbors) SetState(s map[string]*tensor.Tensor) error {
	snap, ver := s["neighbors.snapshot"], s["neighbors.version"]
	if snap == nil || ver == nil {
		n.snap, n.version, n.cache = nil, -1, nil
		return nil
	}
	if len(snap.Shape) != 2 || len(ver.Data) != 1 {
		return fmt.Errorf("defense: neighbour snapshot of shape %v", snap.Shape)
	}
	n.rows, n.dim, n.snap = snap.Shape[0], snap.Shape[1], append([]float32(nil), snap.Data...)
	n.version, n.cache = int(ver.Data[0]), map[int32][]int32{}
	return nil
}
