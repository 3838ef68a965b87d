package attack

import (
	"fmt"

	"github.com/textarmor/textarmor/lexicon"
)

// NearestSet is a substitute table computed from word vectors: for each word
// of the model vocabulary its at most K nearest vocabulary words with cosine
// ≥ MinCos (lexicon.NearestNeighbors). TextFooler's candidate set is K = 50,
// MinCos = 0.5 on the counter-fitted vectors; Alzantot et al.'s is K = 8 with
// squared distance ≤ 0.5, which for unit vectors is MinCos = 0.75.
type NearestSet struct {
	Source  lexicon.Source
	K       int
	MinCos  float64
	Vectors string // the vectors' name, for descriptions
}

func (n *NearestSet) String() string {
	return fmt.Sprintf("the %d nearest neighbours with cosine ≥ %g in %s", n.K, n.MinCos, n.Vectors)
}

// same reports whether the set was built with these parameters.
func (n *NearestSet) same(k int, minCos float64) bool {
	return n.K == k && n.MinCos == minCos
}

// needSubstitutes is needSynonyms for the recipes that can also use a
// NearestSet.
func needSubstitutes(r Resources, recipe string) error {
	if r.Nearest == nil && r.Synonyms == nil {
		return fmt.Errorf("recipe %s needs the counter-fitted neighbour sets (--synonyms) or word vectors (--vectors)", recipe)
	}
	return nil
}

// paperSubstitutes picks a paper-protocol recipe's substitutes: r.Nearest
// when given, else the neighbour sets. It returns the deviation to declare:
// withoutNearest for the neighbour sets, one naming r.Nearest when its k or
// threshold are not the paper's (paper describes those), else "".
func paperSubstitutes(r Resources, k int, minCos float64, paper, withoutNearest string) (lexicon.Source, string) {
	switch {
	case r.Nearest == nil:
		return r.Synonyms, withoutNearest
	case !r.Nearest.same(k, minCos):
		return r.Nearest.Source, "substitutes: " + r.Nearest.String() + " instead of " + paper
	}
	return r.Nearest.Source, ""
}

// appendDev appends the non-empty deviations.
func appendDev(dev []string, more ...string) []string {
	for _, d := range more {
		if d != "" {
			dev = append(dev, d)
		}
	}
	return dev
}
