package lexicon

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/textarmor/textarmor/text"
)

// vectorsFor builds text.Vectors for v from rows given by word; words
// missing from rows are "not found".
func vectorsFor(v *text.Vocab, dim int, rows map[string][]float32) *text.Vectors {
	vs := &text.Vectors{Dim: dim, Data: make([]float32, v.Len()*dim), Found: make([]bool, v.Len())}
	for w, r := range rows {
		id := v.ID(w)
		copy(vs.Data[int(id)*dim:], r)
		vs.Found[id] = true
		vs.NumFound++
	}
	return vs
}

// polar returns a 2-d vector of length r at deg degrees.
func polar(deg, r float64) []float32 {
	a := deg * math.Pi / 180
	return []float32{float32(r * math.Cos(a)), float32(r * math.Sin(a))}
}

func TestNearestNeighborsKnownAnswer(t *testing.T) {
	v := testVocab(t, "e0", "e10", "e10b", "e25", "e45", "e90", "e180", "zero", "novec")
	vecs := vectorsFor(v, 2, map[string][]float32{
		"e0":   polar(0, 3), // lengths differ: cosine must not care
		"e10":  polar(10, 0.5),
		"e10b": polar(10, 7), // same direction as e10: a tie, won by e10 (smaller id)
		"e25":  polar(25, 1),
		"e45":  polar(45, 2),
		"e90":  polar(90, 1),
		"e180": polar(180, 1),
		"zero": {0, 0},
		// the padding row must never be a candidate, even with a vector
		text.PadWord: polar(0, 1),
	})

	n := NearestNeighbors(vecs, v, 3, -1, nil)
	eq(t, "entries", n.Words(), []string{"e0", "e10", "e10b", "e25", "e45", "e90", "e180", "zero", "novec"})
	eq(t, "e0", n.Synonyms("e0"), []string{"e10", "e10b", "e25"})
	eq(t, "e10", n.Synonyms("e10"), []string{"e10b", "e0", "e25"})
	eq(t, "e10b", n.Synonyms("e10b"), []string{"e10", "e0", "e25"})
	eq(t, "e90", n.Synonyms("e90"), []string{"e45", "e25", "e10"})
	eq(t, "e180", n.Synonyms("e180"), []string{"e90", "e45", "e25"})
	eq(t, "zero vector", n.Synonyms("zero"), []string(nil))
	eq(t, "no vector", n.Synonyms("novec"), []string(nil))

	// Threshold: cos(0°, 45°) = 0.707 < 0.75 <= cos(0°, 25°) = 0.906.
	th := NearestNeighbors(vecs, v, 8, 0.75, nil)
	eq(t, "e0 cos>=0.75", th.Synonyms("e0"), []string{"e10", "e10b", "e25"})
	// e0 and e90 are 45° from e45: cos 0.707, out.
	eq(t, "e45 cos>=0.75", th.Synonyms("e45"), []string{"e25", "e10", "e10b"})
	eq(t, "e180 cos>=0.75", th.Synonyms("e180"), []string(nil))

	// No cap: every candidate, e180 (cos −1) included.
	all := NearestNeighbors(vecs, v, 0, -1, nil)
	eq(t, "e0 all", all.Synonyms("e0"), []string{"e10", "e10b", "e25", "e45", "e90", "e180"})
	eq(t, "e0 no cap, cos>=0", NearestNeighbors(vecs, v, 0, 0, nil).Synonyms("e0"), []string{"e10", "e10b", "e25", "e45", "e90"})

	// A chosen subset: unknown and repeated words, order kept.
	sub := NearestNeighbors(vecs, v, 1, -1, []string{"e90", "unknown", "e90", "<unk>", "e0"})
	eq(t, "subset entries", sub.Words(), []string{"e90", "unknown", "<unk>", "e0"})
	eq(t, "subset e90", sub.Synonyms("e90"), []string{"e45"})
	eq(t, "subset e0", sub.Synonyms("e0"), []string{"e10"})
	eq(t, "subset unknown", sub.Synonyms("unknown"), []string(nil))
}

func TestNearestNeighborsPanicsOnMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for vectors of another vocabulary")
		}
	}()
	v := testVocab(t, "a", "b")
	NearestNeighbors(vectorsFor(testVocab(t, "a"), 2, nil), v, 1, -1, nil)
}

func randomVectors(t testing.TB, n, dim int, seed int64) (*text.Vocab, *text.Vectors) {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%05d", i)
	}
	v := testVocab(t, words...)
	rng := rand.New(rand.NewSource(seed))
	vs := &text.Vectors{Dim: dim, Data: make([]float32, v.Len()*dim), Found: make([]bool, v.Len())}
	for id := 2; id < v.Len(); id++ {
		vs.Found[id] = true
		for j := 0; j < dim; j++ {
			vs.Data[id*dim+j] = float32(rng.NormFloat64())
		}
	}
	vs.NumFound = n
	return v, vs
}

// The BLAS path agrees with a float64 brute force, whatever the block size.
func TestNearestNeighborsMatchesBruteForce(t *testing.T) {
	const n, dim, k = 300, 16, 7
	const minCos = 0.3
	v, vecs := randomVectors(t, n, dim, 1)
	cos := func(a, b int32) float64 {
		x, y := vecs.Row(a), vecs.Row(b)
		var d, nx, ny float64
		for j := range x {
			d += float64(x[j]) * float64(y[j])
			nx += float64(x[j]) * float64(x[j])
			ny += float64(y[j]) * float64(y[j])
		}
		return d / math.Sqrt(nx*ny)
	}
	got := NearestNeighbors(vecs, v, k, minCos, nil)

	saved := knnBlockFloats
	knnBlockFloats = 7 * n // blocks of 7 query rows, the last one partial
	small := NearestNeighbors(vecs, v, k, minCos, nil)
	knnBlockFloats = saved

	checked := 0
	for id := int32(2); int(id) < v.Len(); id++ {
		w := v.Word(id)
		var ref []int32
		for u := int32(2); int(u) < v.Len(); u++ {
			if u != id && cos(id, u) >= minCos {
				ref = append(ref, u)
			}
		}
		sort.SliceStable(ref, func(i, j int) bool { return cos(id, ref[i]) > cos(id, ref[j]) })
		if len(ref) > k {
			ref = ref[:k]
		}
		g := got.Synonyms(w)
		eq(t, "blocked "+w, small.Synonyms(w), g)
		if len(g) != len(ref) {
			// Only a pair within float32 rounding of the threshold may differ.
			edge := ref
			if len(g) > len(ref) {
				edge = nil
				for _, s := range g {
					edge = append(edge, v.ID(s))
				}
			}
			if c := cos(id, edge[len(edge)-1]); math.Abs(c-minCos) > 1e-5 {
				t.Errorf("%s: %d neighbours, brute force %d", w, len(g), len(ref))
			}
			continue
		}
		for i := range g {
			if g[i] != v.Word(ref[i]) {
				if d := math.Abs(cos(id, v.ID(g[i])) - cos(id, ref[i])); d > 1e-5 {
					t.Errorf("%s: neighbour %d is %s, brute force %s (cos differ by %g)", w, i, g[i], v.Word(ref[i]), d)
				}
			}
		}
		checked += len(g)
	}
	if checked < n {
		t.Fatalf("only %d neighbours checked: the fixture is too sparse", checked)
	}
}

func BenchmarkNearestNeighbors20kx300(b *testing.B) {
	v, vecs := randomVectors(b, 20000, 300, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		NearestNeighbors(vecs, v, 8, -1, nil)
	}
}
