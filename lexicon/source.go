package lexicon

import "strings"

// Source gives candidate substitutes for a word.
//
// Synonyms returns them in a deterministic order (best first where the
// source has a ranking), without duplicates and never containing word
// itself. The result is a fresh slice the caller may modify. A word the
// source does not know gets nil.
type Source interface {
	Name() string
	Synonyms(word string) []string
}

// Compose returns the union of sources: the substitutes of the first source,
// then those of the second that are not already listed, and so on. Nil
// sources are skipped.
func Compose(sources ...Source) Source {
	var kept []Source
	for _, s := range sources {
		if s != nil {
			kept = append(kept, s)
		}
	}
	return union(kept)
}

type union []Source

func (u union) Name() string {
	names := make([]string, len(u))
	for i, s := range u {
		names[i] = s.Name()
	}
	return strings.Join(names, "+")
}

func (u union) Synonyms(word string) []string {
	var out []string
	seen := map[string]bool{word: true}
	for _, s := range u {
		for _, c := range s.Synonyms(word) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Filter wraps src so that stop words get no substitutes; other words get
// src's. Only the word being replaced is checked: candidates that happen to
// be stop words are kept, as in TextFooler and FTML, which only forbid
// perturbing a stop word.
func Filter(src Source, stop StopSet) Source {
	return filtered{src, stop}
}

type filtered struct {
	src  Source
	stop StopSet
}

func (f filtered) Name() string { return f.src.Name() + "-stopwords" }

func (f filtered) Synonyms(word string) []string {
	if f.stop[word] {
		return nil
	}
	return f.src.Synonyms(word)
}
