package lexicon

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// knnBlockFloats bounds the similarity block Q·Cᵀ (rows × candidates) kept
// in memory at once: 4M float32 = 16 MiB, whatever the vocabulary size. A
// variable so tests can force many small blocks.
var knnBlockFloats = 4 << 20

// NearestNeighbors computes, for each word, its nearest words by cosine
// similarity of the vectors vecs (rows indexed by the ids of v):
// the at most k words with cosine >= minCos, most similar first, ties broken
// by the smaller vocabulary id (the more frequent word for a vocabulary
// built by text.BuildVocab). k <= 0 means no cap; minCos <= -1 means no
// threshold.
//
// Candidates and queries are the words of v other than PadWord and UnkWord
// that have a vector (vecs.Found) with a non-zero norm; a word is never its
// own neighbour. words chooses which entries to compute (nil = every word
// of v except the reserved two, in id order); each becomes an entry, with no
// neighbours when it is not in v or has no vector, and repeats are ignored.
//
// For unit vectors, as the counter-fitted ones are, the squared distance is
// 2 − 2·cos, so FTML's S(w) (k = 8, squared distance <= 0.5) is k = 8,
// minCos = 0.75. Scores are float32 dot products of normalised rows, so a
// pair within about 1e-6 of the threshold may fall on either side.
//
// The similarities are computed with tensor.Gemm on blocks of query rows
// against all candidates, so memory stays at the normalised matrix plus a
// 16 MiB block. It panics if vecs does not match v.
func NearestNeighbors(vecs *text.Vectors, v *text.Vocab, k int, minCos float32, words []string) *Neighbors {
	n := v.Len()
	if len(vecs.Found) != n || len(vecs.Data) != n*vecs.Dim {
		panic(fmt.Sprintf("lexicon.NearestNeighbors: vectors have %d rows of %d values, vocabulary has %d words", len(vecs.Found), vecs.Dim, n))
	}
	dim := vecs.Dim
	if minCos <= -1 {
		// Rounding can put a true −1 slightly below −1.
		minCos = float32(math.Inf(-1))
	}

	// Candidate matrix: normalised rows of usable words, in id order.
	row := make([]int32, n) // id -> candidate row, or -1
	var ids []int32         // candidate row -> id
	for id := range row {
		row[id] = -1
		if id <= int(text.UnkID) || !vecs.Found[id] {
			continue
		}
		if norm(vecs.Row(int32(id))) > 0 {
			row[id] = int32(len(ids))
			ids = append(ids, int32(id))
		}
	}
	m := len(ids)
	c := make([]float32, m*dim)
	for r, id := range ids {
		src := vecs.Row(id)
		inv := 1 / norm(src)
		dst := c[r*dim : (r+1)*dim]
		for j, x := range src {
			dst[j] = float32(float64(x) * inv)
		}
	}

	out := NewNeighbors(fmt.Sprintf("knn-k%d-cos%g", k, max(minCos, -1)))
	if words == nil {
		for id := int(text.UnkID) + 1; id < n; id++ {
			words = append(words, v.Word(int32(id)))
		}
	}
	var queries []int32 // candidate rows to compute
	var entries []string
	for _, w := range words {
		if out.Has(w) {
			continue
		}
		out.Set(w, nil)
		if isRealWord(v, w) && row[v.ID(w)] >= 0 {
			queries = append(queries, row[v.ID(w)])
			entries = append(entries, w)
		}
	}
	if len(queries) == 0 || m == 0 {
		return out
	}

	block := knnBlockFloats / m
	if block < 1 {
		block = 1
	}
	if block > len(queries) {
		block = len(queries)
	}
	q := make([]float32, block*dim)
	s := make([]float32, block*m)
	results := make([][]int32, len(queries)) // neighbour candidate rows
	for lo := 0; lo < len(queries); lo += block {
		hi := min(lo+block, len(queries))
		b := hi - lo
		for i := 0; i < b; i++ {
			r := int(queries[lo+i])
			copy(q[i*dim:(i+1)*dim], c[r*dim:(r+1)*dim])
		}
		tensor.Gemm(false, true, b, m, dim, 1, q, dim, c, dim, 0, s, m)
		parallelRows(b, func(i int, sel *topK) {
			results[lo+i] = sel.run(s[i*m:(i+1)*m], queries[lo+i], k, minCos)
		})
	}
	for i, w := range entries {
		l := make([]string, len(results[i]))
		for j, r := range results[i] {
			l[j] = v.Word(ids[r])
		}
		out.lists[w] = l
	}
	return out
}

func norm(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return math.Sqrt(ss)
}

// parallelRows calls f for rows 0..n-1 from GOMAXPROCS workers, each with
// its own selection scratch.
func parallelRows(n int, f func(i int, sel *topK)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sel topK
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i, &sel)
			}
		}()
	}
	wg.Wait()
}

// topK selects the best candidates of one similarity row. Candidate rows are
// in id order, so "smaller row" is "smaller id" for tie-breaking.
type topK struct {
	score []float32
	idx   []int32
}

// better orders (score, row) pairs: higher score first, then smaller row.
func better(s1 float32, r1 int32, s2 float32, r2 int32) bool {
	return s1 > s2 || (s1 == s2 && r1 < r2)
}

func (t *topK) run(sims []float32, self int32, k int, minCos float32) []int32 {
	t.score, t.idx = t.score[:0], t.idx[:0]
	if k <= 0 {
		for r, x := range sims {
			if int32(r) != self && x >= minCos {
				t.score = append(t.score, x)
				t.idx = append(t.idx, int32(r))
			}
		}
		sort.Sort(t)
		return append([]int32(nil), t.idx...)
	}
	// Keep a sorted list of at most k entries; insertion is cheap because
	// most candidates fail the first comparison with the current worst.
	for r, x := range sims {
		if int32(r) == self || !(x >= minCos) { // !(>=) also rejects NaN
			continue
		}
		n := len(t.idx)
		if n == k && !better(x, int32(r), t.score[n-1], t.idx[n-1]) {
			continue
		}
		if n < k {
			t.score = append(t.score, 0)
			t.idx = append(t.idx, 0)
			n++
		}
		j := n - 1
		for j > 0 && better(x, int32(r), t.score[j-1], t.idx[j-1]) {
			t.score[j], t.idx[j] = t.score[j-1], t.idx[j-1]
			j--
		}
		t.score[j], t.idx[j] = x, int32(r)
	}
	return append([]int32(nil), t.idx...)
}

func (t *topK) Len() int { return len(t.idx) }
func (t *topK) Less(i, j int) bool {
	return better(t.score[i], t.idx[i], t.score[j], t.idx[j])
}
func (t *topK) Swap(i, j int) {
	t.score[i], t.score[j] = t.score[j], t.score[i]
	t.idx[i], t.idx[j] = t.idx[j], t.idx[i]
}
