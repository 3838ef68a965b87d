package lexicon

import (
	"strings"
	"unicode"
)

// Universal part-of-speech tags (Petrov et al. 2012, NLTK's "universal"
// tagset).
const (
	TagNoun = "NOUN"
	TagVerb = "VERB"
	TagAdj  = "ADJ"
	TagAdv  = "ADV"
	TagPron = "PRON"
	TagDet  = "DET"
	TagAdp  = "ADP"
	TagNum  = "NUM"
	TagConj = "CONJ"
	TagPrt  = "PRT"
	TagPunc = "."
	TagX    = "X"
)

// POSTagger is a pure-Go stand-in for NLTK's averaged-perceptron tagger
// (universal tagset). It is a lexicon tagger, not a trained one:
//
//   - closed-class words (determiners, pronouns, adpositions, conjunctions,
//     particles, auxiliaries, common adverbs, number words) come from fixed
//     lists; digits are NUM and punctuation is ".";
//   - an open-class word may take the parts of speech WordNet lists for it
//     (WordNet.Synsets with morphy, so inflected forms count);
//     without WordNet, or for words WordNet lacks, suffix rules guess one;
//   - among several possible tags, a few context rules pick one (after a
//     determiner or adjective: adjective if the next word can be a noun,
//     else noun; after "to", a modal or a subject pronoun: verb; after a
//     form of "be": adjective), and otherwise the tag with the most WordNet
//     senses wins.
//
// Its accuracy is well below a trained tagger's on ambiguous words; the
// constraint built on it (attack.POSAgreement) therefore asks only whether the
// substitute CAN take the original word's tag, which depends on the
// lexicon rather than on the tagger's choice for the substitute.
type POSTagger struct {
	WN *WordNet // nil: suffix rules only
}

// Name implements attack.Tagger.
func (t POSTagger) Name() string {
	if t.WN == nil {
		return "lexicon-tagger(suffix rules)"
	}
	return "lexicon-tagger(wordnet)"
}

var closedClass = func() map[string]string {
	m := map[string]string{}
	add := func(tag, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = tag
		}
	}
	add(TagDet, "the a an this that these those every each some any no all both either neither another such what which whose")
	add(TagPron, "i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself "+
		"we us our ours ourselves they them their theirs themselves who whom someone somebody anyone anybody everyone everybody "+
		"nobody something anything everything nothing")
	add(TagAdp, "of in on at by for with from about into through over under between against during without within along "+
		"across behind beyond around among upon since until after before above below near toward towards via despite like as than")
	add(TagConj, "and or but nor yet because although though while whereas if unless whether")
	add(TagPrt, "to 's ' n't")
	add(TagVerb, "is are was were be been being am 'm 're have has had having do does did will would can could shall should may might must ca wo")
	add(TagAdv, "not never very too also just only even still already always often again here there then now however quite rather almost so")
	add(TagNum, "one two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand million billion")
	return m
}()

var (
	modals   = NewStopSet(strings.Fields("to will would can could shall should may might must do does did ca wo n't")...)
	subjects = NewStopSet(strings.Fields("i you we they he she it who")...)
	beForms  = NewStopSet(strings.Fields("is are was were be been being am 'm 're seems seemed looks looked feels felt very too so quite")...)
)

// closedTag returns the tag of a closed-class word, a number or punctuation.
func closedTag(w string) (string, bool) {
	if t, ok := closedClass[w]; ok {
		return t, true
	}
	if w == "" {
		return TagX, true
	}
	letters, digits := false, false
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters = true
		case unicode.IsDigit(r):
			digits = true
		}
	}
	switch {
	case digits && !letters:
		return TagNum, true
	case !letters && !digits:
		return TagPunc, true
	}
	return "", false
}

// suffixTag guesses the tag of an unknown open-class word.
func suffixTag(w string) string {
	for _, r := range []struct{ suf, tag string }{
		{"ly", TagAdv}, {"ing", TagVerb}, {"ed", TagVerb}, {"ize", TagVerb}, {"ise", TagVerb}, {"ify", TagVerb},
		{"ous", TagAdj}, {"ful", TagAdj}, {"able", TagAdj}, {"ible", TagAdj}, {"ive", TagAdj}, {"less", TagAdj},
		{"ic", TagAdj}, {"al", TagAdj}, {"ish", TagAdj},
	} {
		if len(w) > len(r.suf)+2 && strings.HasSuffix(w, r.suf) {
			return r.tag
		}
	}
	return TagNoun
}

var wnTags = [...]struct {
	pos POS
	tag string
}{{Noun, TagNoun}, {Verb, TagVerb}, {Adj, TagAdj}, {Adv, TagAdv}}

// Possible returns the tags word can take with their WordNet sense counts
// (count 0 for a closed-class tag or a suffix guess).
func (t POSTagger) Possible(word string) map[string]int {
	w := strings.ToLower(word)
	if tag, ok := closedTag(w); ok {
		return map[string]int{tag: 0}
	}
	out := map[string]int{}
	if t.WN != nil {
		for _, p := range wnTags {
			if n := len(t.WN.Synsets(w, p.pos)); n > 0 {
				out[p.tag] = n
			}
		}
	}
	if len(out) == 0 {
		out[suffixTag(w)] = 0
	}
	return out
}

// CanTake reports whether word can have tag.
func (t POSTagger) CanTake(word, tag string) bool {
	_, ok := t.Possible(word)[tag]
	return ok
}

// Tag implements attack.Tagger.
func (t POSTagger) Tag(words []string) []string {
	tags := make([]string, len(words))
	poss := make([]map[string]int, len(words))
	for i, w := range words {
		poss[i] = t.Possible(w)
	}
	for i, w := range words {
		p := poss[i]
		if len(p) == 1 {
			for tag := range p {
				tags[i] = tag
			}
			continue
		}
		tags[i] = t.choose(strings.ToLower(w), p, words, tags, poss, i)
	}
	return tags
}

func (t POSTagger) choose(w string, p map[string]int, words, tags []string, poss []map[string]int, i int) string {
	has := func(tag string) bool { _, ok := p[tag]; return ok }
	if strings.HasSuffix(w, "ly") && has(TagAdv) {
		return TagAdv
	}
	if i > 0 {
		prev, pw := tags[i-1], strings.ToLower(words[i-1])
		switch {
		case prev == TagDet || prev == TagAdj || pw == "'s" || pw == "his" || pw == "her" || pw == "their" || pw == "my" || pw == "your" || pw == "our" || pw == "its":
			if has(TagAdj) && i+1 < len(words) {
				if _, n := poss[i+1][TagNoun]; n {
					return TagAdj
				}
			}
			if has(TagNoun) {
				return TagNoun
			}
		case modals.Has(pw) || subjects.Has(pw):
			if has(TagVerb) {
				return TagVerb
			}
		case prev == TagVerb && has(TagAdv) && (i+1 == len(words) || !nounable(poss[i+1])) && !beForms.Has(pw):
			return TagAdv
		case beForms.Has(pw):
			if has(TagAdj) {
				return TagAdj
			}
			if has(TagVerb) && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "en")) {
				return TagVerb
			}
		}
	}
	best, bn := "", -1
	for _, c := range wnTags {
		if n, ok := p[c.tag]; ok && n > bn {
			best, bn = c.tag, n
		}
	}
	if best == "" {
		for tag := range p {
			return tag
		}
	}
	return best
}

func nounable(p map[string]int) bool { _, ok := p[TagNoun]; return ok }
