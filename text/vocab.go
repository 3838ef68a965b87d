package text

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Reserved ids and words. A zero-filled id batch is all padding, and every
// out-of-vocabulary word maps to one shared row.
const (
	PadID   int32 = 0
	UnkID   int32 = 1
	PadWord       = "<pad>"
	UnkWord       = "<unk>"
)

// Vocab maps words to ids: PadWord is 0, UnkWord is 1, real words follow.
// The zero value is usable and empty (every word is unknown).
type Vocab struct {
	words []string
	index map[string]int32
	// open, when set, makes ID add unknown words (NewOpenVocab).
	open *sync.RWMutex
}

// CountWords counts every token of docs.
func CountWords(docs [][]string) map[string]int {
	counts := make(map[string]int)
	for _, d := range docs {
		for _, w := range d {
			counts[w]++
		}
	}
	return counts
}

// BuildVocab builds a vocabulary from tokenised training documents.
//
// minCount keeps the words whose count is >= minCount. Papers usually state a
// "frequency > t" threshold; that is minCount t+1: FLAT's "frequency > 5" is
// minCount 6 and "> 0" (keep everything) is minCount 1. Values below 1 act as 1.
// maxSize caps the number of real words (PadWord and UnkWord are not counted);
// 0 means no cap. Words are ordered by descending count, ties broken
// lexicographically, so the result does not depend on map or document order.
// The reserved words PadWord and UnkWord found in docs are not added again.
func BuildVocab(docs [][]string, minCount, maxSize int) *Vocab {
	return BuildVocabFromCounts(CountWords(docs), minCount, maxSize)
}

// BuildVocabFromCounts is BuildVocab for precomputed counts (e.g. streamed
// over a corpus too big to hold tokenised).
func BuildVocabFromCounts(counts map[string]int, minCount, maxSize int) *Vocab {
	if minCount < 1 {
		minCount = 1
	}
	type wc struct {
		w string
		c int
	}
	list := make([]wc, 0, len(counts))
	for w, c := range counts {
		if c >= minCount && w != PadWord && w != UnkWord {
			list = append(list, wc{w, c})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].c != list[j].c {
			return list[i].c > list[j].c
		}
		return list[i].w < list[j].w
	})
	if maxSize > 0 && len(list) > maxSize {
		list = list[:maxSize]
	}
	words := make([]string, 0, len(list)+2)
	words = append(words, PadWord, UnkWord)
	for _, x := range list {
		words = append(words, x.w)
	}
	v, _ := NewVocab(words) // valid by construction
	return v
}

// NewVocab rebuilds a vocabulary from a saved word list, where words[i] gets
// id i. words[0] must be PadWord and words[1] UnkWord; words must be non-empty
// and distinct.
func NewVocab(words []string) (*Vocab, error) {
	if len(words) < 2 || words[PadID] != PadWord || words[UnkID] != UnkWord {
		return nil, fmt.Errorf("text: vocabulary must start with %q, %q", PadWord, UnkWord)
	}
	if int64(len(words)) > int64(1<<31-1) {
		return nil, fmt.Errorf("text: vocabulary too large (%d words)", len(words))
	}
	v := &Vocab{words: append([]string(nil), words...), index: make(map[string]int32, len(words))}
	for i, w := range words {
		if w == "" {
			return nil, fmt.Errorf("text: vocabulary word %d is empty", i)
		}
		if j, dup := v.index[w]; dup {
			return nil, fmt.Errorf("text: vocabulary word %q appears twice (ids %d and %d)", w, j, i)
		}
		v.index[w] = int32(i)
	}
	return v, nil
}

// NewOpenVocab is a vocabulary in which every word has an id: ID gives a
// new word the next id on first sight. It serves models that read text
// rather than a closed word list (a transformer re-tokenizes words into
// pieces), so word-level attacks can name any substitute. Safe for
// concurrent use.
func NewOpenVocab() *Vocab {
	v, _ := NewVocab([]string{PadWord, UnkWord})
	v.open = new(sync.RWMutex)
	return v
}

// Open reports whether v is an open vocabulary (NewOpenVocab).
func (v *Vocab) Open() bool { return v.open != nil }

// ID returns the id of w, or UnkID when w is not in the vocabulary (an open
// vocabulary adds it instead). The empty word is always UnkID.
func (v *Vocab) ID(w string) int32 {
	if v.open == nil {
		if id, ok := v.index[w]; ok {
			return id
		}
		return UnkID
	}
	v.open.RLock()
	id, ok := v.index[w]
	v.open.RUnlock()
	if ok {
		return id
	}
	if w == "" {
		return UnkID
	}
	v.open.Lock()
	defer v.open.Unlock()
	if id, ok := v.index[w]; ok {
		return id
	}
	id = int32(len(v.words))
	v.words = append(v.words, w)
	v.index[w] = id
	return id
}

// Word returns the word with the given id, or UnkWord for an id out of range.
func (v *Vocab) Word(id int32) string {
	if v.open != nil {
		v.open.RLock()
		defer v.open.RUnlock()
	}
	if id < 0 || int(id) >= len(v.words) {
		return UnkWord
	}
	return v.words[id]
}

// Len returns the number of ids, PadWord and UnkWord included.
func (v *Vocab) Len() int {
	if v.open != nil {
		v.open.RLock()
		defer v.open.RUnlock()
	}
	return len(v.words)
}

// Words returns a copy of the word list (index = id).
func (v *Vocab) Words() []string {
	if v.open != nil {
		v.open.RLock()
		defer v.open.RUnlock()
	}
	return append([]string(nil), v.words...)
}

// Has reports whether w has its own id (PadWord and UnkWord included); an
// open vocabulary has every non-empty word.
func (v *Vocab) Has(w string) bool {
	if v.open != nil {
		return w != ""
	}
	_, ok := v.index[w]
	return ok
}

// Encode maps tokens to ids, keeping at most maxLen of them (the first ones;
// maxLen <= 0 means no limit). It does not pad: that is the batcher's job.
func (v *Vocab) Encode(tokens []string, maxLen int) []int32 {
	if maxLen > 0 && len(tokens) > maxLen {
		tokens = tokens[:maxLen]
	}
	ids := make([]int32, len(tokens))
	for i, w := range tokens {
		ids[i] = v.ID(w)
	}
	return ids
}

// MarshalJSON writes the vocabulary as a plain JSON list of words.
func (v Vocab) MarshalJSON() ([]byte, error) {
	words := v.Words()
	if words == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(words)
}

// UnmarshalJSON reads a JSON list of words, validated as by NewVocab.
func (v *Vocab) UnmarshalJSON(data []byte) error {
	var words []string
	if err := json.Unmarshal(data, &words); err != nil {
		return fmt.Errorf("text: vocabulary JSON: %w", err)
	}
	nv, err := NewVocab(words)
	if err != nil {
		return err
	}
	*v = *nv
	return nil
}
