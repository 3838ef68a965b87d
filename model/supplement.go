package model

import (
	"errors"
	"fmt"
	"sort"
	"unicode"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// DictionaryWords returns FTML's dictionary for a transformer (FTML spec
// §7.3, §14 A15): of the n most frequent words of texts, as wp
// pre-tokenizes and normalises them (ties in order of first occurrence),
// those that are purely alphabetic, most frequent first. Words with digits,
// apostrophes or other marks keep their WordPiece splitting and take no
// part in the metric learning.
func DictionaryWords(wp *text.WordPiece, texts []string, n int) []string {
	if n <= 0 {
		return nil
	}
	count := map[string]int{}
	var order []string
	for _, s := range texts {
		for _, w := range wp.Words(s) {
			if count[w] == 0 {
				order = append(order, w)
			}
			count[w]++
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	var out []string
	for _, w := range order[:min(n, len(order))] {
		if alphabetic(w) {
			out = append(out, w)
		}
	}
	return out
}

func alphabetic(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return w != ""
}

// SupplementVocab appends to a transformer's vocabulary every word of words
// that is not a token yet, as a whole token (FTML spec §7.3): its
// embedding row is the mean of the rows of the pieces the tokenizer split
// it into before. It returns how many tokens were added. Call it before
// training: a model with a reconstruction head (tied to the table) or a
// SEM id map is refused.
func (m *Model) SupplementVocab(words []string) (int, error) {
	switch {
	case m.Pieces == nil:
		return 0, errors.New("the vocabulary supplement needs a transformer (WordPiece) model")
	case m.Net.Rec != nil:
		return 0, errors.New("the vocabulary supplement cannot grow a model with a reconstruction head")
	case len(m.Net.Cfg.IDMap) > 0:
		return 0, errors.New("the vocabulary supplement must come before an id map (SEM) is installed")
	}
	var add []string
	seen := map[string]bool{}
	for _, w := range words {
		if _, ok := m.Pieces.ID(w); !ok && !seen[w] && w != "" {
			seen[w] = true
			add = append(add, w)
		}
	}
	if len(add) == 0 {
		return 0, nil
	}
	old := m.Net.Emb.W.Value
	v, d := old.Shape[0], old.Shape[1]
	if v != m.Pieces.Size() {
		return 0, fmt.Errorf("the embedding table has %d rows, the tokenizer %d tokens", v, m.Pieces.Size())
	}
	const maxRows = 1 << 24
	if v+len(add) > maxRows {
		return 0, fmt.Errorf("a supplement of %d words would give %d tokens (at most %d)", len(add), v+len(add), maxRows)
	}
	wp, err := m.Pieces.WithTokens(add)
	if err != nil {
		return 0, err
	}
	grown := tensor.New(v+len(add), d)
	copy(grown.Data, old.Data)
	for i, w := range add {
		row := grown.Data[(v+i)*d : (v+i+1)*d]
		pieces := m.Pieces.Tokenize(w)
		for _, p := range pieces {
			tensor.Axpy(1, old.Data[int(p.ID)*d:(int(p.ID)+1)*d], row)
		}
		if len(pieces) > 0 {
			inv := 1 / float32(len(pieces))
			for j := range row {
				row[j] *= inv
			}
		}
	}
	p := ag.NewParam(m.Net.Emb.W.Name, grown)
	if m.Net.Emb.W.RowSparse() {
		p.SetRowSparse()
	}
	p.Frozen = m.Net.Emb.W.Frozen
	m.Net.Emb.W = p
	m.Net.Cfg.VocabSize = wp.Size()
	m.Meta.Net.VocabSize = wp.Size()
	m.Pieces = wp
	return len(add), nil
}
