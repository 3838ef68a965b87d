package defense

import (
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// SynonymTable is S(w) by vocabulary id: for each id, the ids of its at
// most K synonyms, nearest first (the order of the neighbour file).
type SynonymTable struct {
	ids [][]int32
}

// NewSynonymTable restricts a neighbour table to the vocabulary v: a word
// keeps the first k of its neighbours that are real words of v (k <= 0: all).
// The padding and unknown ids and the FTML stop words
// (lexicon.FTML21) get no synonyms (spec §3 rule 4).
func NewSynonymTable(n *lexicon.Neighbors, v *text.Vocab, k int) *SynonymTable {
	stop := lexicon.FTML21()
	s := &SynonymTable{ids: make([][]int32, v.Len())}
	for id := int32(text.UnkID) + 1; int(id) < v.Len(); id++ {
		w := v.Word(id)
		if stop.Has(w) {
			continue
		}
		var l []int32
		for _, u := range n.Synonyms(w) {
			if k > 0 && len(l) == k {
				break
			}
			if u == text.PadWord || u == text.UnkWord || !v.Has(u) {
				continue
			}
			if uid := v.ID(u); uid != id {
				l = append(l, uid)
			}
		}
		s.ids[id] = l
	}
	return s
}

// NewSynonymTableIDs wraps a table given directly by ids (tests, tools).
func NewSynonymTableIDs(ids [][]int32) *SynonymTable { return &SynonymTable{ids: ids} }

// Of returns the synonym ids of id (nil when it has none).
func (s *SynonymTable) Of(id int32) []int32 {
	if int(id) < 0 || int(id) >= len(s.ids) {
		return nil
	}
	return s.ids[id]
}

// Nearest keeps each word's first k synonyms (the table's order: nearest
// first in the counter-fitted neighbour sets).
func (s *SynonymTable) Nearest(k int) *SynonymTable {
	out := &SynonymTable{ids: make([][]int32, len(s.ids))}
	for id, l := range s.ids {
		out.ids[id] = l[:min(k, len(l))]
	}
	return out
}

// Len is the vocabulary size the table was built for.
func (s *SynonymTable) Len() int { return len(s.ids) }

// Coverage counts the real words (ids >= 2) with at least one synonym, out
// of all real words.
func (s *SynonymTable) Coverage() (withSynonyms, total int) {
	for id := int(text.UnkID) + 1; id < len(s.ids); id++ {
		total++
		if len(s.ids[id]) > 0 {
			withSynonyms++
		}
	}
	return withSynonyms, total
}
