package attack

import (
	"strings"

	"github.com/textarmor/textarmor/lexicon"
)

// Transformation proposes substitutes for word i of words.
type Transformation interface {
	Name() string
	Substitutes(words []string, i int) []string
}

// WordSwap draws substitutes from a synonym source.
type WordSwap struct{ Source lexicon.Source }

// Name implements Transformation.
func (w WordSwap) Name() string { return "word-swap(" + w.Source.Name() + ")" }

// Substitutes implements Transformation. Multi-word entries (WordNet's
// "ice_cream") are dropped: a substitution replaces exactly one token.
func (w WordSwap) Substitutes(words []string, i int) []string {
	var out []string
	for _, s := range w.Source.Synonyms(words[i]) {
		if !strings.ContainsAny(s, "_ ") {
			out = append(out, s)
		}
	}
	return out
}
