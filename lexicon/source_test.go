package lexicon

import "testing"

func fixture(name string, table map[string][]string, order ...string) *Neighbors {
	n := NewNeighbors(name)
	for _, w := range order {
		n.Set(w, table[w])
	}
	return n
}

func TestComposeUnionKeepsOrder(t *testing.T) {
	a := fixture("a", map[string][]string{"good": {"fine", "nice"}, "bad": {"poor"}}, "good", "bad")
	b := fixture("b", map[string][]string{"good": {"nice", "decent", "good"}, "movie": {"film"}}, "good", "movie")
	c := Compose(a, nil, b)
	eq(t, "Name", c.Name(), "a+b")
	eq(t, "good", c.Synonyms("good"), []string{"fine", "nice", "decent"})
	eq(t, "bad", c.Synonyms("bad"), []string{"poor"})
	eq(t, "movie", c.Synonyms("movie"), []string{"film"})
	eq(t, "unknown", c.Synonyms("zzz"), []string(nil))
	eq(t, "empty union", Compose().Synonyms("good"), []string(nil))
}

func TestComposeNeverReturnsTheWord(t *testing.T) {
	// A source that breaks the contract must not leak the word through.
	bad := sourceFunc(func(w string) []string { return []string{w, "x", "x"} })
	eq(t, "w", Compose(bad).Synonyms("w"), []string{"x"})
}

type sourceFunc func(string) []string

func (f sourceFunc) Name() string                  { return "func" }
func (f sourceFunc) Synonyms(word string) []string { return f(word) }

func TestFilterSilencesStopWordsOnly(t *testing.T) {
	n := fixture("n", map[string][]string{"the": {"a", "an"}, "big": {"large", "the"}}, "the", "big")
	f := Filter(n, FTML21())
	eq(t, "Name", f.Name(), "n-stopwords")
	eq(t, "stop word", f.Synonyms("the"), []string(nil))
	// Candidates that are stop words stay: only perturbing a stop word is
	// forbidden.
	eq(t, "content word", f.Synonyms("big"), []string{"large", "the"})
	eq(t, "nil set", Filter(n, nil).Synonyms("the"), []string{"a", "an"})
}

func TestSynonymsReturnsACopy(t *testing.T) {
	n := fixture("n", map[string][]string{"big": {"large", "huge"}}, "big")
	s := n.Synonyms("big")
	s[0] = "MUTATED"
	eq(t, "after caller mutation", n.Synonyms("big"), []string{"large", "huge"})
}
