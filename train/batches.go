package train

import (
	"math/rand"
	"sort"

	"github.com/textarmor/textarmor/nn"
)

// Example is an encoded training example.
type Example struct {
	IDs   []int32
	Label int
}

// bucketPool is how many batches' worth of shuffled examples are sorted by
// length together: padding drops sharply while batches stay random.
const bucketPool = 50

// Batches shuffles examples with rng and groups them into batches of
// similar length, returned in random order.
func Batches(ex []Example, size int, rng *rand.Rand, minLen int) []*nn.Batch {
	order := rng.Perm(len(ex))
	var groups [][]int
	pool := size * bucketPool
	for s := 0; s < len(order); s += pool {
		chunk := order[s:min(s+pool, len(order))]
		sort.SliceStable(chunk, func(a, b int) bool { return len(ex[chunk[a]].IDs) < len(ex[chunk[b]].IDs) })
		for i := 0; i < len(chunk); i += size {
			groups = append(groups, chunk[i:min(i+size, len(chunk))])
		}
	}
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	out := make([]*nn.Batch, len(groups))
	for i, g := range groups {
		seqs := make([][]int32, len(g))
		labels := make([]int, len(g))
		for j, k := range g {
			seqs[j], labels[j] = ex[k].IDs, ex[k].Label
		}
		out[i] = nn.MakeBatch(seqs, labels, minLen)
		out[i].Index = g
	}
	return out
}

// StepsPerEpoch is how many batches Batches makes of n examples.
func StepsPerEpoch(n, size int) int {
	steps, pool := 0, size*bucketPool
	for s := 0; s < n; s += pool {
		steps += (min(s+pool, n) - s + size - 1) / size
	}
	return steps
}
