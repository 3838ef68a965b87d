package attack

import (
	"fmt"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/textarmor/textarmor/lexicon"
)

// PreConstraint decides whether position i of the current sequence cur may
// be modified (TextAttack's pre-transformation constraints).
type PreConstraint interface {
	Name() string
	Allow(s *State, cur []int32, i int) bool
}

// FinalConstraint is a PreConstraint that also bounds the final result: a
// candidate that violates it never counts as successful (for searches such
// as GA and PSO whose crossover can combine modifications).
type FinalConstraint interface {
	Final(s *State, seq []int32) bool
}

// StopWords forbids modifying stop words.
type StopWords struct {
	Set  lexicon.StopSet
	Desc string // e.g. "textfooler-266"
}

// Name implements PreConstraint.
func (c StopWords) Name() string { return "stopwords(" + c.Desc + ")" }

// Allow implements PreConstraint.
func (c StopWords) Allow(s *State, _ []int32, i int) bool { return !c.Set.Has(s.Words[i]) }

// NoRepeat forbids modifying a position twice.
type NoRepeat struct{}

// Name implements PreConstraint.
func (NoRepeat) Name() string { return "repeat-modification" }

// Allow implements PreConstraint.
func (NoRepeat) Allow(s *State, cur []int32, i int) bool { return cur[i] == s.Orig[i] }

// MaxModificationRate allows at most max(floor(Rate·n), MinWords) modified
// words, n being the number of words of the original text. FTML's ε = 0.25
// is Rate 0.25, MinWords 0 (R(x,x') ≤ ε); TextAttack's constraint rounds up
// with a minimum of one word, which is Ceil true, MinWords 1.
type MaxModificationRate struct {
	Rate     float64
	MinWords int
	Ceil     bool
}

// Name implements PreConstraint.
func (c MaxModificationRate) Name() string { return fmt.Sprintf("max-modification-rate(%g)", c.Rate) }

func (c MaxModificationRate) limit(n int) int {
	x := c.Rate * float64(n)
	var l int
	if c.Ceil {
		l = int(math.Ceil(x - 1e-9))
	} else {
		l = int(math.Floor(x + 1e-9))
	}
	return max(l, c.MinWords)
}

// Allow implements PreConstraint: changing an already modified position
// does not raise the count.
func (c MaxModificationRate) Allow(s *State, cur []int32, i int) bool {
	if cur[i] != s.Orig[i] {
		return true
	}
	return s.Modified(cur)+1 <= c.limit(s.NumWords)
}

// Final implements FinalConstraint.
func (c MaxModificationRate) Final(s *State, seq []int32) bool {
	return s.Modified(seq) <= c.limit(s.NumWords)
}

// MinWordLength forbids modifying words shorter than Min characters.
type MinWordLength struct{ Min int }

// Name implements PreConstraint.
func (c MinWordLength) Name() string { return fmt.Sprintf("min-word-length(%d)", c.Min) }

// Allow implements PreConstraint.
func (c MinWordLength) Allow(s *State, _ []int32, i int) bool {
	return utf8.RuneCountInString(s.Words[i]) >= c.Min
}

// Protected forbids modifying the listed words (e.g. named entities).
type Protected struct{ Words map[string]bool }

// Name implements PreConstraint.
func (Protected) Name() string { return "protected-words" }

// Allow implements PreConstraint.
func (c Protected) Allow(s *State, _ []int32, i int) bool { return !c.Words[s.Words[i]] }

// PostConstraint filters a transformed text: orig is the original text,
// prev the text before the substitution at position i and next after it
// (all as word lists of the same length).
type PostConstraint interface {
	Name() string
	Check(orig, prev, next []string, i int) bool
}

// SentenceEncoder measures the similarity of two texts (the Universal
// Sentence Encoder in TextFooler/BAE/HLA). No implementation ships yet.
type SentenceEncoder interface {
	Name() string
	Similarity(a, b []string) float64
}

// SentenceSimilarity keeps a substitution when the similarity of Window
// words around position i (the whole text when Window is 0 or the text is
// shorter) is at least Threshold, compared with the previous text (or the
// original when AgainstOriginal).
type SentenceSimilarity struct {
	Encoder         SentenceEncoder
	Threshold       float64
	Window          int
	AgainstOriginal bool
	// SkipShort skips the check for texts shorter than Window (TextFooler).
	SkipShort bool
}

// Name implements PostConstraint.
func (c SentenceSimilarity) Name() string {
	return fmt.Sprintf("sentence-similarity(%s>=%g,window=%d)", c.Encoder.Name(), c.Threshold, c.Window)
}

// Check implements PostConstraint.
func (c SentenceSimilarity) Check(orig, prev, next []string, i int) bool {
	ref := prev
	if c.AgainstOriginal {
		ref = orig
	}
	if c.Window > 0 && len(next) < c.Window && c.SkipShort {
		return true
	}
	a, b := window(ref, i, c.Window), window(next, i, c.Window)
	return c.Encoder.Similarity(a, b) >= c.Threshold
}

// window returns up to w words centred on i (all words when w <= 0).
func window(words []string, i, w int) []string {
	if w <= 0 || len(words) <= w {
		return words
	}
	lo := max(i-w/2, 0)
	hi := min(lo+w, len(words))
	lo = max(hi-w, 0)
	return words[lo:hi]
}

// Tagger gives part-of-speech tags for a text (one per word).
type Tagger interface {
	Name() string
	Tag(words []string) []string
}

// PartOfSpeech keeps a substitution whose word has the same tag as the word
// it replaces (TextFooler: universal tagset, noun/verb swaps allowed when
// AllowNounVerb).
type PartOfSpeech struct {
	Tagger        Tagger
	AllowNounVerb bool
}

// Name implements PostConstraint.
func (c PartOfSpeech) Name() string { return "part-of-speech(" + c.Tagger.Name() + ")" }

// Check implements PostConstraint.
func (c PartOfSpeech) Check(_, prev, next []string, i int) bool {
	a, b := c.Tagger.Tag(prev)[i], c.Tagger.Tag(next)[i]
	if a == b {
		return true
	}
	nv := func(t string) bool { return t == "NOUN" || t == "VERB" }
	return c.AllowNounVerb && nv(a) && nv(b)
}

// POSAgreement keeps a substitution when the substitute can take the part
// of speech the original word has in context (tagged on the text before
// the substitution), with noun↔verb swaps allowed when AllowNounVerb
// (TextFooler). It approximates TextAttack's PartOfSpeech constraint (which
// tags both texts with NLTK's perceptron tagger and compares the two tags)
// by asking the lexicon whether the substitute can take the tag, since a
// lexicon tagger's choice for an ambiguous substitute is unreliable.
type POSAgreement struct {
	Tagger        lexicon.POSTagger
	AllowNounVerb bool
}

// Name implements PostConstraint.
func (c POSAgreement) Name() string { return "part-of-speech-agreement(" + c.Tagger.Name() + ")" }

// Check implements PostConstraint.
func (c POSAgreement) Check(_, prev, next []string, i int) bool {
	// Only a few words of context matter to the tagger's rules.
	lo, hi := max(i-4, 0), min(i+2, len(prev))
	tag := c.Tagger.Tag(prev[lo:hi])[i-lo]
	if c.Tagger.CanTake(next[i], tag) {
		return true
	}
	if c.AllowNounVerb && (tag == lexicon.TagNoun || tag == lexicon.TagVerb) {
		return c.Tagger.CanTake(next[i], lexicon.TagNoun) || c.Tagger.CanTake(next[i], lexicon.TagVerb)
	}
	return false
}

// posConstraint builds the POS constraint for a tagger: POSAgreement for the
// lexicon tagger, PartOfSpeech (tag both texts, compare) otherwise.
func posConstraint(t Tagger, allowNounVerb bool) PostConstraint {
	switch lt := t.(type) {
	case lexicon.POSTagger:
		return POSAgreement{Tagger: lt, AllowNounVerb: allowNounVerb}
	case *lexicon.POSTagger:
		return POSAgreement{Tagger: *lt, AllowNounVerb: allowNounVerb}
	}
	return PartOfSpeech{Tagger: t, AllowNounVerb: allowNounVerb}
}

// LanguageModel scores a word in context (log-probability).
type LanguageModel interface {
	Name() string
	LogProb(words []string, i int) float64
}

// LMFilter keeps a substitution whose log-probability is at most MaxDrop
// below the original word's.
type LMFilter struct {
	LM      LanguageModel
	MaxDrop float64
}

// Name implements PostConstraint.
func (c LMFilter) Name() string { return "language-model(" + c.LM.Name() + ")" }

// Check implements PostConstraint.
func (c LMFilter) Check(_, prev, next []string, i int) bool {
	return c.LM.LogProb(prev, i)-c.LM.LogProb(next, i) <= c.MaxDrop
}

// CandidateSelector is a post-transformation constraint that judges the
// substitutes of one position together rather than one by one.
type CandidateSelector interface {
	PostConstraint
	// Select reports which of subs (substitutes for position i of prev,
	// each already past the per-candidate checks) to keep.
	Select(orig, prev []string, i int, subs []string) []bool
}

// LMTopN keeps the N substitutes of a position that a language model scores
// highest in the current text: Alzantot et al. (2018) keep the best 4 of
// the 8 nearest neighbours under the Google 1-billion-word LM.
type LMTopN struct {
	LM LanguageModel
	N  int
}

// Name implements PostConstraint.
func (c LMTopN) Name() string { return fmt.Sprintf("language-model-top%d(%s)", c.N, c.LM.Name()) }

// Check implements PostConstraint; the work is in Select.
func (c LMTopN) Check(_, _, _ []string, _ int) bool { return true }

// Select implements CandidateSelector. Ties keep the earlier substitute
// (the synonym source's order), so the choice is deterministic.
func (c LMTopN) Select(_, prev []string, i int, subs []string) []bool {
	keep := make([]bool, len(subs))
	if len(subs) <= c.N {
		for k := range keep {
			keep[k] = true
		}
		return keep
	}
	words := append([]string(nil), prev...)
	score := make([]float64, len(subs))
	order := make([]int, len(subs))
	for k, w := range subs {
		words[i] = w
		score[k], order[k] = c.LM.LogProb(words, i), k
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	for _, k := range order[:max(c.N, 0)] {
		keep[k] = true
	}
	return keep
}

// WordDistance gives the distance of two words in an embedding space.
type WordDistance interface {
	Name() string
	Distance(a, b string) (d float64, ok bool)
}

// WordEmbeddingDistance keeps a substitution whose distance to the original
// word is at most Max (words the space lacks are rejected).
type WordEmbeddingDistance struct {
	Space WordDistance
	Max   float64
}

// Name implements PostConstraint.
func (c WordEmbeddingDistance) Name() string {
	return fmt.Sprintf("word-embedding-distance(%s<=%g)", c.Space.Name(), c.Max)
}

// Check implements PostConstraint.
func (c WordEmbeddingDistance) Check(orig, _, next []string, i int) bool {
	d, ok := c.Space.Distance(orig[i], next[i])
	return ok && d <= c.Max
}
