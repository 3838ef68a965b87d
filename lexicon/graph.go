package lexicon

import (
	"slices"

	"github.com/textarmor/textarmor/text"
)

// VocabGraph returns, for every id of v, its neighbours in the symmetrised
// relation of src restricted to v's real words: u is a neighbour of w when
// either lists the other. Lists are in ascending id order, without self
// loops; padding and unknown have none. Retrofitting and the group-mask
// partition walk this graph.
func VocabGraph(src Source, v *text.Vocab) [][]int32 {
	n := v.Len()
	sets := make([]map[int32]bool, n)
	add := func(a, b int32) {
		if sets[a] == nil {
			sets[a] = map[int32]bool{}
		}
		sets[a][b] = true
	}
	for id := int32(text.UnkID) + 1; id < int32(n); id++ {
		for _, s := range src.Synonyms(v.Word(id)) {
			if j := v.ID(s); j > text.UnkID && j != id {
				add(id, j)
				add(j, id)
			}
		}
	}
	out := make([][]int32, n)
	for id, s := range sets {
		for j := range s {
			out[id] = append(out[id], j)
		}
		slices.Sort(out[id])
	}
	return out
}
