package vocabgroup

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

func vocabOf(t *testing.T, words ...string) *text.Vocab {
	t.Helper()
	v, err := text.NewVocab(append([]string{text.PadWord, text.UnkWord}, words...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestByNeighborsComponents: a hand-made table whose components and packing
// are known.
func TestByNeighborsComponents(t *testing.T) {
	// Components (in vocab): {a b c d e} via a chain of one-way edges,
	// {f g h i}, {j k l}, {m n}, {o p}; q and r are linked only through the
	// out-of-vocabulary word "zzz"; s has no entry; t lists only itself.
	v := vocabOf(t, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t")
	nb := lexicon.NewNeighbors("test")
	nb.Set("a", []string{"b"})
	nb.Set("c", []string{"b", "zzz"}) // reverse edge only: b does not list c
	nb.Set("d", []string{"c"})
	nb.Set("e", []string{"a", "<unk>"})
	nb.Set("f", []string{"g", "h", "i"})
	nb.Set("j", []string{"k"})
	nb.Set("l", []string{"j"})
	nb.Set("n", []string{"m"})
	nb.Set("p", []string{"o"})
	nb.Set("q", []string{"zzz"})
	nb.Set("r", []string{"zzz"})
	nb.Set("t", []string{"t"})
	groups, n, err := ByNeighbors(nb, v, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || len(groups) != v.Len() {
		t.Fatalf("%d groups for %d ids, want 3 for %d", n, len(groups), v.Len())
	}
	g := func(w string) int32 { return groups[v.ID(w)] }
	same := [][]string{{"a", "b", "c", "d", "e"}, {"f", "g", "h", "i"}, {"j", "k", "l"}, {"m", "n"}, {"o", "p"}}
	for _, comp := range same {
		for _, w := range comp {
			if g(w) != g(comp[0]) {
				t.Errorf("%s in group %d, %s in %d: a component was split", w, g(w), comp[0], g(comp[0]))
			}
			if g(w) == 2 {
				t.Errorf("%s (has neighbours) is in the extra group", w)
			}
		}
	}
	for _, w := range []string{text.PadWord, text.UnkWord, "q", "r", "s", "t"} {
		if g(w) != 2 {
			t.Errorf("%s in group %d, want the extra group 2", w, g(w))
		}
	}
	// Largest first into the smallest group: 5→0, 4→1, 3→1 (loads 5/7),
	// {m n}→0 (7/7), {o p}→0 (a tie goes to the lowest group).
	want := map[string]int32{"a": 0, "f": 1, "j": 1, "m": 0, "o": 0}
	for w, k := range want {
		if g(w) != k {
			t.Errorf("component of %s packed into group %d, want %d", w, g(w), k)
		}
	}
	if s := Sizes(groups, n); !slices.Equal(s, []int{9, 7, 6}) {
		t.Errorf("sizes %v, want [9 7 6]", s)
	}

	if _, _, err := ByNeighbors(nb, v, 0); err == nil {
		t.Error("0 groups accepted")
	}
	empty := lexicon.NewNeighbors("empty")
	empty.Set("q", []string{"zzz"})
	if _, _, err := ByNeighbors(empty, v, 3); err == nil {
		t.Error("a table with no in-vocabulary edge accepted")
	}
}

// TestByNeighborsRandomGraph: on a random directed graph every edge inside
// the vocabulary joins one group, the result does not depend on the
// table's insertion order, and words without an in-vocabulary neighbour
// are exactly the extra group.
func TestByNeighborsRandomGraph(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var words []string
	for i := 0; i < 400; i++ {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	v := vocabOf(t, words[:300]...) // w300..w399 are out of vocabulary
	lists := map[string][]string{}
	for i := 0; i < 120; i++ {
		w := words[r.Intn(len(words))]
		for k := 0; k < 1+r.Intn(2); k++ {
			lists[w] = append(lists[w], words[r.Intn(len(words))])
		}
	}
	keys := make([]string, 0, len(lists))
	for w := range lists {
		keys = append(keys, w)
	}
	slices.Sort(keys)
	build := func(order []string) *lexicon.Neighbors {
		nb := lexicon.NewNeighbors("random")
		for _, w := range order {
			nb.Set(w, lists[w])
		}
		return nb
	}
	for _, g := range []int{1, 3, 10} {
		groups, n, err := ByNeighbors(build(keys), v, g)
		if err != nil {
			t.Fatal(err)
		}
		rev := slices.Clone(keys)
		slices.Reverse(rev)
		again, _, _ := ByNeighbors(build(rev), v, g)
		if !slices.Equal(groups, again) {
			t.Errorf("g=%d: the grouping depends on the table's order", g)
		}
		hasNb := map[string]bool{}
		for w, l := range lists {
			for _, u := range l {
				if u == w || !v.Has(w) || !v.Has(u) {
					continue
				}
				hasNb[w], hasNb[u] = true, true
				if groups[v.ID(w)] != groups[v.ID(u)] {
					t.Errorf("g=%d: synonyms %s and %s in groups %d and %d", g, w, u, groups[v.ID(w)], groups[v.ID(u)])
				}
			}
		}
		for id := 0; id < v.Len(); id++ {
			w := v.Word(int32(id))
			if extra := groups[id] == int32(g); extra == hasNb[w] {
				t.Errorf("g=%d: %s in group %d, has neighbours %v", g, w, groups[id], hasNb[w])
			}
		}
		// Greedy packing into the smallest group: the spread of the group
		// sizes is at most the largest component.
		sizes := Sizes(groups, n)
		if big := largestComponent(v, lists); slices.Max(sizes[:g])-slices.Min(sizes[:g]) > big {
			t.Errorf("g=%d: sizes %v spread more than the largest component (%d)", g, sizes, big)
		}
		t.Logf("g=%d: sizes %v", g, sizes)
	}
}

// largestComponent is the size of the largest connected component of the
// symmetrised graph of lists restricted to v (breadth-first search).
func largestComponent(v *text.Vocab, lists map[string][]string) int {
	adj := map[string][]string{}
	for w, l := range lists {
		for _, u := range l {
			if u != w && v.Has(w) && v.Has(u) {
				adj[w] = append(adj[w], u)
				adj[u] = append(adj[u], w)
			}
		}
	}
	seen := map[string]bool{}
	best := 0
	for w := range adj {
		if seen[w] {
			continue
		}
		seen[w] = true
		queue, size := []string{w}, 0
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			size++
			for _, u := range adj[x] {
				if !seen[u] {
					seen[u] = true
					queue = append(queue, u)
				}
			}
		}
		best = max(best, size)
	}
	return best
}

// TestKMeansRecoversClusters: well-separated directions, each point scaled
// by a random length (normalisation must remove it), are recovered exactly;
// words without a vector form the extra group.
func TestKMeansRecoversClusters(t *testing.T) {
	const k, per, d = 5, 40, 12
	r := rand.New(rand.NewSource(11))
	v := 2 + k*per + 7 // 7 words without a vector at the end
	vs := &text.Vectors{Dim: d, Data: make([]float32, v*d), Found: make([]bool, v)}
	truth := make([]int, v)
	for i := range truth {
		truth[i] = -1
	}
	for c := 0; c < k; c++ {
		for j := 0; j < per; j++ {
			id := 2 + r.Intn(k*per) // scattered ids
			for vs.Found[id] {
				id = 2 + (id-1)%(k*per)
			}
			vs.Found[id] = true
			vs.NumFound++
			truth[id] = c
			length := float32(0.1 + 10*r.Float64())
			row := vs.Row(int32(id))
			for x := range row {
				row[x] = float32(r.NormFloat64()*0.08) * length
			}
			row[2*c] += length // cluster c points along axis 2c
		}
	}
	for _, seed := range []int64{1, 2, 3} {
		groups, n, err := KMeans(vs, k, seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n != k+1 || len(groups) != v {
			t.Fatalf("%d groups for %d ids", n, len(groups))
		}
		of := map[int]int32{}
		used := map[int32]bool{}
		for id, c := range truth {
			if c < 0 {
				if groups[id] != k {
					t.Errorf("seed %d: id %d has no vector but is in group %d", seed, id, groups[id])
				}
				continue
			}
			if g, ok := of[c]; !ok {
				if used[groups[id]] {
					t.Errorf("seed %d: two clusters share group %d", seed, groups[id])
				}
				of[c], used[groups[id]] = groups[id], true
			} else if groups[id] != g {
				t.Errorf("seed %d: cluster %d split between groups %d and %d", seed, c, g, groups[id])
			}
		}
		again, _, _ := KMeans(vs, k, seed, 0)
		if !slices.Equal(groups, again) {
			t.Errorf("seed %d: two runs differ", seed)
		}
	}
	// More groups than words: one word per group.
	small := &text.Vectors{Dim: 2, Data: []float32{0, 0, 0, 0, 1, 0, 0, 1}, Found: []bool{false, false, true, true}, NumFound: 2}
	if groups, n, err := KMeans(small, 3, 1, 0); err != nil || n != 4 || !slices.Equal(groups, []int32{3, 3, 0, 1}) {
		t.Errorf("tiny k-means: %v, %d, %v", groups, n, err)
	}
	if _, _, err := KMeans(vs, 0, 1, 0); err == nil {
		t.Error("0 groups accepted")
	}
	none := &text.Vectors{Dim: 2, Data: make([]float32, 8), Found: []bool{false, false, true, false}}
	if _, _, err := KMeans(none, 2, 1, 0); err == nil {
		t.Error("only zero vectors accepted")
	}
}
