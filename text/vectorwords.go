package text

import "strings"

// WithVectorWords extends the vocabulary mv with the first limit
// words of the vectors file that it lacks (lower-cased, in file order), the
// candidates of TextAttack's embedding swaps that reach the model as UNK.
func WithVectorWords(mv *Vocab, path string, limit int) (*Vocab, error) {
	if limit == 0 {
		return mv, nil
	}
	fileWords, err := VectorWords(path)
	if err != nil {
		return nil, err
	}
	words := mv.Words()
	seen := make(map[string]bool, len(words))
	for _, w := range words {
		seen[w] = true
	}
	added := 0
	for _, w := range fileWords {
		if added == limit {
			break
		}
		if w = strings.ToLower(w); !seen[w] && !strings.ContainsAny(w, " \t") {
			seen[w] = true
			words = append(words, w)
			added++
		}
	}
	return NewVocab(words)
}
