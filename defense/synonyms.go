package defense

import (
	"fmt"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// SynonymTable is S(w) by vocabulary id: for each id, the ids of its at
// most K synonyms, nearest first (the order of the neighbour file).
//
// It also knows which ids are dictionary words: every id from 2 in a word
// vocabulary (most frequent first); in a transformer's vocabulary only the
// dataset words that are whole tokens (NewPieceSynonymTable), so that word
// pieces, special and unused tokens are never anchors, negatives or SEM
// codes.
type SynonymTable struct {
	ids [][]int32
	// dict lists the dictionary ids most frequent first; nil means every
	// id from text.UnkID+1, in id order.
	dict   []int32
	isWord []bool
	// continues marks continuation pieces ("##ing") of a WordPiece
	// vocabulary: a word followed by one is the start of a longer word.
	continues []bool
}

// NewSynonymTable restricts a neighbour table to the vocabulary v: a word
// keeps the first k of its neighbours that are real words of v (k <= 0: all).
// The padding and unknown ids and the FTML stop words
// (lexicon.FTML21) get no synonyms (spec §3 rule 4).
func NewSynonymTable(n *lexicon.Neighbors, v *text.Vocab, k int) *SynonymTable {
	s := &SynonymTable{ids: make([][]int32, v.Len())}
	stop := lexicon.FTML21()
	lookup := func(w string) (int32, bool) {
		if w == text.PadWord || w == text.UnkWord || !v.Has(w) {
			return 0, false
		}
		return v.ID(w), true
	}
	for id := int32(text.UnkID) + 1; int(id) < v.Len(); id++ {
		s.ids[id] = synonymsOf(n, stop, v.Word(id), id, lookup, k)
	}
	return s
}

// NewPieceSynonymTable builds the table over a WordPiece vocabulary for
// the dictionary words (most frequent first), each of which must be one
// token of wp (FTML spec §7.3: after the vocabulary supplement). Only
// dictionary words get synonyms, and only dictionary words are synonyms;
// the FTML stop words get none.
func NewPieceSynonymTable(n *lexicon.Neighbors, wp *text.WordPiece, words []string, k int) (*SynonymTable, error) {
	s := &SynonymTable{ids: make([][]int32, wp.Size()), isWord: make([]bool, wp.Size()), continues: make([]bool, wp.Size())}
	for i, w := range words {
		id, ok := wp.ID(w)
		if !ok || wp.Continues(id) || id == wp.UnkID() || id == wp.CLSID() || id == wp.SEPID() || id == wp.PadID() || id == wp.MaskID() {
			return nil, fmt.Errorf("defense: dictionary word %d %q is not a word token of the vocabulary", i, w)
		}
		if s.isWord[id] {
			return nil, fmt.Errorf("defense: dictionary word %q appears twice", w)
		}
		s.isWord[id] = true
		s.dict = append(s.dict, id)
	}
	for id := range s.continues {
		s.continues[id] = wp.Continues(int32(id))
	}
	stop := lexicon.FTML21()
	lookup := func(w string) (int32, bool) {
		id, ok := wp.ID(w)
		return id, ok && s.isWord[id]
	}
	for i, id := range s.dict {
		s.ids[id] = synonymsOf(n, stop, words[i], id, lookup, k)
	}
	return s, nil
}

// synonymsOf is the first k neighbours of word (id) that lookup finds.
func synonymsOf(n *lexicon.Neighbors, stop lexicon.StopSet, word string, id int32, lookup func(string) (int32, bool), k int) []int32 {
	if stop.Has(word) {
		return nil
	}
	var l []int32
	for _, u := range n.Synonyms(word) {
		if k > 0 && len(l) == k {
			break
		}
		if uid, ok := lookup(u); ok && uid != id {
			l = append(l, uid)
		}
	}
	return l
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
	out := *s
	out.ids = make([][]int32, len(s.ids))
	for id, l := range s.ids {
		out.ids[id] = l[:min(k, len(l))]
	}
	return &out
}

// Len is the vocabulary size the table was built for.
func (s *SynonymTable) Len() int { return len(s.ids) }

// IsWord reports whether id is a dictionary word.
func (s *SynonymTable) IsWord(id int32) bool {
	if s.isWord == nil {
		return id > text.UnkID && int(id) < len(s.ids)
	}
	return id >= 0 && int(id) < len(s.isWord) && s.isWord[id]
}

// Dictionary returns the dictionary ids, most frequent first.
func (s *SynonymTable) Dictionary() []int32 {
	if s.isWord != nil {
		return s.dict
	}
	out := make([]int32, 0, max(len(s.ids)-int(text.UnkID)-1, 0))
	for id := text.UnkID + 1; int(id) < len(s.ids); id++ {
		out = append(out, id)
	}
	return out
}

// Pieces reports whether the table is over a WordPiece vocabulary.
func (s *SynonymTable) Pieces() bool { return s != nil && s.continues != nil }

// Continues reports whether id continues the word of the token before it.
func (s *SynonymTable) Continues(id int32) bool {
	return s != nil && s.continues != nil && id >= 0 && int(id) < len(s.continues) && s.continues[id]
}

// Coverage counts the dictionary words with at least one synonym, out of
// all dictionary words.
func (s *SynonymTable) Coverage() (withSynonyms, total int) {
	for _, id := range s.Dictionary() {
		total++
		if len(s.ids[id]) > 0 {
			withSynonyms++
		}
	}
	return withSynonyms, total
}
