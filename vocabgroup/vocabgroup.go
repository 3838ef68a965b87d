// Package vocabgroup partitions a model vocabulary into groups, for FLAT's
// trivial group-mask baseline (spec flat.md §11, Table 10; nn.GroupMask):
// every group shares one learnable scalar mask on its words' embeddings.
//
// The spec clusters unit-normalised counter-fitted vectors with k-means
// (KMeans). Without those vectors, ByNeighbors is the substitute: the
// connected components of the symmetrised neighbour graph, packed into G
// groups, so that a word and its synonyms always share a mask.
//
// Both return the group of every vocabulary id and the number of groups,
// G + 1: groups 0..G-1 are the clusters, group G holds the words that could
// not be grouped (no in-vocabulary neighbour, or no vector) and the padding
// and unknown tokens. Results are deterministic.
package vocabgroup

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// Method names, as recorded in a model's training info.
const (
	MethodComponents = "neighbour-graph components"
	MethodKMeans     = "k-means"
)

// DefaultKMeansIters bounds the Lloyd iterations of KMeans.
const DefaultKMeansIters = 100

// realWord reports whether id is a word of its own (not padding or unknown).
func realWord(id int32) bool { return id > text.UnkID }

// ByNeighbors groups the words of vocab by the connected components of the
// neighbour graph of src restricted to vocab: w and u are joined when u is
// a neighbour of w or w one of u (the graph is symmetrised). Components
// are packed into g groups greedily, largest first (ties: lowest word id
// first), each into the currently smallest group (ties: lowest group
// index), so synonyms always share a group and group sizes stay close.
// Words without an in-vocabulary neighbour, <pad> and <unk> go to the extra
// group g. It fails when g < 1 or no word has an in-vocabulary neighbour.
func ByNeighbors(src lexicon.Source, vocab *text.Vocab, g int) (groups []int32, n int, err error) {
	if g < 1 {
		return nil, 0, fmt.Errorf("vocabgroup: %d groups: need at least 1", g)
	}
	if src == nil || vocab == nil {
		return nil, 0, errors.New("vocabgroup: no neighbour table or vocabulary")
	}
	v := vocab.Len()
	parent := make([]int32, v)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	graph := lexicon.VocabGraph(src, vocab)
	linked := make([]bool, v)
	for id, nb := range graph {
		linked[id] = len(nb) > 0
		for _, u := range nb {
			a, b := find(int32(id)), find(u)
			if a != b {
				// The smaller id becomes the root, so each component is
				// named by its lowest word id.
				if b < a {
					a, b = b, a
				}
				parent[b] = a
			}
		}
	}
	// Components in order of their lowest id, with their sizes.
	size := map[int32]int{}
	var roots []int32
	for id := int32(0); int(id) < v; id++ {
		if !linked[id] {
			continue
		}
		r := find(id)
		if size[r] == 0 {
			roots = append(roots, r)
		}
		size[r]++
	}
	if len(roots) == 0 {
		return nil, 0, fmt.Errorf("vocabgroup: no word of the %d-word vocabulary has an in-vocabulary neighbour in %s", v, src.Name())
	}
	sort.SliceStable(roots, func(a, b int) bool { return size[roots[a]] > size[roots[b]] })
	load := make([]int, g)
	of := map[int32]int32{}
	for _, r := range roots {
		best := 0
		for k := 1; k < g; k++ {
			if load[k] < load[best] {
				best = k
			}
		}
		of[r] = int32(best)
		load[best] += size[r]
	}
	groups = make([]int32, v)
	for id := range groups {
		groups[id] = int32(g)
		if linked[id] {
			groups[id] = of[find(int32(id))]
		}
	}
	return groups, g + 1, nil
}

// KMeans groups the words that have a vector in vs (vs.Found, <pad> and
// <unk> excluded, zero vectors excluded) into g clusters by k-means with
// Euclidean distance on the unit-normalised vectors: k-means++ seeding from
// a math/rand source seeded with seed, then Lloyd iterations until no
// assignment changes or iters rounds (≤ 0: DefaultKMeansIters). A cluster
// that empties keeps its centre. Distance ties go to the lowest cluster.
// Words without a vector go to the extra group g. With at most g such words
// each gets a cluster of its own. It fails when g < 1 or no word has a
// vector.
func KMeans(vs *text.Vectors, g int, seed int64, iters int) (groups []int32, n int, err error) {
	if g < 1 {
		return nil, 0, fmt.Errorf("vocabgroup: %d groups: need at least 1", g)
	}
	if vs == nil || vs.Dim < 1 {
		return nil, 0, errors.New("vocabgroup: no word vectors")
	}
	if iters <= 0 {
		iters = DefaultKMeansIters
	}
	v, d := len(vs.Found), vs.Dim
	groups = make([]int32, v)
	var ids []int32
	var x []float32
	for id := range groups {
		groups[id] = int32(g)
		if !vs.Found[id] || !realWord(int32(id)) {
			continue
		}
		row := vs.Row(int32(id))
		var s float64
		for _, a := range row {
			s += float64(a) * float64(a)
		}
		if s == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(s))
		for _, a := range row {
			x = append(x, a*inv)
		}
		ids = append(ids, int32(id))
	}
	p := len(ids)
	if p == 0 {
		return nil, 0, fmt.Errorf("vocabgroup: none of the %d vocabulary words has a (non-zero) vector", v)
	}
	if p <= g {
		for i, id := range ids {
			groups[id] = int32(i)
		}
		return groups, g + 1, nil
	}
	c := seedPlusPlus(x, p, d, g, rand.New(rand.NewSource(seed)))
	assign := make([]int32, p)
	for i := range assign {
		assign[i] = -1
	}
	dots := make([]float32, p*g)
	norms := make([]float32, g)
	count := make([]int, g)
	sum := make([]float64, g*d)
	for it := 0; it < iters; it++ {
		// ‖x − c‖² = 1 − 2x·c + ‖c‖² for unit x.
		tensor.Gemm(false, true, p, g, d, 1, x, d, c, d, 0, dots, g)
		for k := 0; k < g; k++ {
			norms[k] = dot(c[k*d:(k+1)*d], c[k*d:(k+1)*d])
		}
		changed := 0
		for i := 0; i < p; i++ {
			best, bd := int32(0), float32(math.Inf(1))
			for k := 0; k < g; k++ {
				if dk := norms[k] - 2*dots[i*g+k]; dk < bd {
					best, bd = int32(k), dk
				}
			}
			if assign[i] != best {
				assign[i] = best
				changed++
			}
		}
		if changed == 0 {
			break
		}
		clear(count)
		clear(sum)
		for i, k := range assign {
			count[k]++
			s := sum[int(k)*d : int(k+1)*d]
			for j, a := range x[i*d : (i+1)*d] {
				s[j] += float64(a)
			}
		}
		for k := 0; k < g; k++ {
			if count[k] == 0 {
				continue
			}
			for j := 0; j < d; j++ {
				c[k*d+j] = float32(sum[k*d+j] / float64(count[k]))
			}
		}
	}
	for i, id := range ids {
		groups[id] = assign[i]
	}
	return groups, g + 1, nil
}

// seedPlusPlus picks g initial centres among the p rows of x [p, d]
// (k-means++: each next centre drawn with probability proportional to its
// squared distance from the nearest centre so far).
func seedPlusPlus(x []float32, p, d, g int, rng *rand.Rand) []float32 {
	c := make([]float32, g*d)
	d2 := make([]float64, p)
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	pick := rng.Intn(p)
	for k := 0; k < g; k++ {
		if k > 0 {
			var total float64
			for _, a := range d2 {
				total += a
			}
			if total == 0 { // every point coincides with a centre
				pick = rng.Intn(p)
			} else {
				r := rng.Float64() * total
				pick = -1
				for i, a := range d2 {
					if a == 0 {
						continue
					}
					pick = i // the last candidate, should rounding leave r ≥ 0
					if r -= a; r < 0 {
						break
					}
				}
			}
		}
		ck := c[k*d : (k+1)*d]
		copy(ck, x[pick*d:(pick+1)*d])
		for i := range d2 {
			var s float64
			for j, a := range x[i*d : (i+1)*d] {
				e := float64(a - ck[j])
				s += e * e
			}
			d2[i] = math.Min(d2[i], s)
		}
	}
	return c
}

func dot(a, b []float32) float32 {
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Sizes counts the words of each of the n groups.
func Sizes(groups []int32, n int) []int {
	out := make([]int, n)
	for _, k := range groups {
		if k >= 0 && int(k) < n {
			out[k]++
		}
	}
	return out
}
