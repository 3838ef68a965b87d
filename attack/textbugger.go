package attack

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/lexicon"
)

// TextBugger is the transformation of TextBugger (Li et al. 2019) as
// TextAttack's textbugger recipe composes it: the union of five bugs of a
// word w = c_0 … c_{n−1} (positions count characters, i.e. code points):
//
//  1. insert a space before c_i, one random i in [1, n−2] (TextAttack's
//     skip_first_char and skip_last_char: never before the first or the last
//     character, so words of fewer than 3 characters get none);
//  2. delete c_i, one random i in [1, n−2];
//  3. swap c_i and c_{i+1}, one random i in [1, n−3] (words of 4 or more
//     characters; nothing when the two characters are equal);
//  4. every character that has a homoglyph (HomoglyphOf) replaced by it, one
//     candidate per such position, first and last characters included;
//  5. the word's substitutes in Words (Sub-W: its nearest words in an
//     embedding, already cut to the recipe's k).
//
// The random positions are not drawn from a stream: each is a hash of
// (Seed, the word's index in the text, the bug, the word), so the
// candidates of a word never depend on the order in which positions are
// visited, on other examples or on goroutine scheduling. Tokens without a
// letter or digit (punctuation) get no candidate, as TextAttack never counts
// them as words. Candidates equal to the word are dropped, and repeats keep
// their first place in the order above.
type TextBugger struct {
	// Words are the Sub-W substitutes, used as they are; nil: none.
	Words lexicon.Source
	// Seed chooses the random positions of bugs 1–3.
	Seed int64
}

// The bugs with a random position, as hash inputs.
const (
	bugInsert byte = iota + 1
	bugDelete
	bugSwap
)

// Name implements Transformation.
func (t TextBugger) Name() string {
	w := "none"
	if t.Words != nil {
		w = t.Words.Name()
	}
	return fmt.Sprintf("textbugger(insert-space,delete,swap,homoglyph,sub-w=%s;seed=%d)", w, t.Seed)
}

// Substitutes implements Transformation.
func (t TextBugger) Substitutes(words []string, i int) []string {
	if i < 0 || i >= len(words) {
		return nil
	}
	w := words[i]
	if !hasLetterOrDigit(w) {
		return nil
	}
	var out []string
	seen := map[string]bool{w: true}
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, bug := range []func(string, int) (string, bool){t.InsertSpace, t.Delete, t.Swap} {
		if c, ok := bug(w, i); ok {
			add(c)
		}
	}
	for _, c := range Homoglyphs(w) {
		add(c)
	}
	if t.Words != nil {
		for _, s := range t.Words.Synonyms(w) {
			if !strings.ContainsAny(s, "_ ") { // one word replaces one word, as in WordSwap
				add(s)
			}
		}
	}
	return out
}

// InsertSpace is bug 1 for word at index in its text: the word with a
// space inserted before its character i, i drawn in [1, n−2]; false when
// the word has fewer than 3 characters.
func (t TextBugger) InsertSpace(word string, index int) (string, bool) {
	r := []rune(word)
	i, ok := t.pick(bugInsert, word, index, 1, len(r)-1)
	if !ok {
		return "", false
	}
	return string(r[:i]) + " " + string(r[i:]), true
}

// Delete is bug 2: the word without its character i, i drawn in [1, n−2];
// false when the word has fewer than 3 characters.
func (t TextBugger) Delete(word string, index int) (string, bool) {
	r := []rune(word)
	i, ok := t.pick(bugDelete, word, index, 1, len(r)-1)
	if !ok {
		return "", false
	}
	return string(r[:i]) + string(r[i+1:]), true
}

// Swap is bug 3: the word with its characters i and i+1 swapped, i drawn
// in [1, n−3]; false when the word has fewer than 4 characters or the two
// characters are equal (the word would not change).
func (t TextBugger) Swap(word string, index int) (string, bool) {
	r := []rune(word)
	i, ok := t.pick(bugSwap, word, index, 1, len(r)-2)
	if !ok || r[i] == r[i+1] {
		return "", false
	}
	r[i], r[i+1] = r[i+1], r[i]
	return string(r), true
}

// pick draws a position in [lo, hi) for a bug of word at index: a hash of
// (Seed, index, bug, word), so the same inputs always give the same
// position. False when the range is empty.
func (t TextBugger) pick(bug byte, word string, index, lo, hi int) (int, bool) {
	if lo >= hi {
		return 0, false
	}
	var b [17]byte
	binary.LittleEndian.PutUint64(b[0:8], uint64(t.Seed))
	binary.LittleEndian.PutUint64(b[8:16], uint64(index))
	b[16] = bug
	h := fnv.New64a()
	h.Write(b[:])
	h.Write([]byte(word))
	return lo + int(seeded.Mix(h.Sum64())%uint64(hi-lo)), true
}

// homoglyphs is TextAttack's WordSwapHomoglyphSwap table: each key's
// visually similar replacement. Only lower-case letters, digits, the
// hyphen and the apostrophe have one.
var homoglyphs = map[rune]rune{
	'-':  '\u02D7', // modifier letter minus sign
	'9':  '\u09ED', // Bengali digit seven
	'8':  '\u0222', // Latin capital letter OU
	'7':  '\U0001D7D5',
	'6':  '\u0431',
	'5':  '\u01BC',
	'4':  '\u13CE',
	'3':  '\u01B7',
	'2':  '\u14BF',
	'1':  'l',
	'0':  'O',
	'\'': '`',
	'a':  '\u0251',
	'b':  '\u042C',
	'c':  '\u03F2',
	'd':  '\u0501',
	'e':  '\u0435', // Cyrillic small letter ie
	'f':  '\U0001D68F',
	'g':  '\u0261',
	'h':  '\u0570',
	'i':  '\u0456',
	'j':  '\u03F3',
	'k':  '\U0001D48C',
	'l':  '\u217C', // small Roman numeral fifty
	'm':  '\uFF4D', // fullwidth m
	'n':  '\u0578',
	'o':  '\u043E', // Cyrillic small letter o
	'p':  '\u0440',
	'q':  '\u051B',
	'r':  '\u2C85',
	's':  '\u0455',
	't':  '\U0001D69D',
	'u':  '\u057D',
	'v':  '\u0475',
	'w':  '\u051D',
	'x':  '\u00D7', // multiplication sign
	'y':  '\u0443',
	'z':  '\u1D22',
}

// HomoglyphOf returns c's homoglyph in TextAttack's table, if it has one.
func HomoglyphOf(c rune) (rune, bool) {
	h, ok := homoglyphs[c]
	return h, ok
}

// Homoglyphs is bug 4 (TextAttack's WordSwapHomoglyphSwap with
// random_one=False, as the recipe builds it): one candidate per character
// that has a homoglyph, that character replaced, in the order of the
// characters.
func Homoglyphs(word string) []string {
	r := []rune(word)
	var out []string
	for i, c := range r {
		h, ok := homoglyphs[c]
		if !ok {
			continue
		}
		r[i] = h
		out = append(out, string(r))
		r[i] = c
	}
	return out
}

func hasLetterOrDigit(w string) bool {
	for _, c := range w {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			return true
		}
	}
	return false
}

// firstN is a synonym source cut to its first n substitutes.
type firstN struct {
	src lexicon.Source
	n   int
}

func (f firstN) Name() string { return fmt.Sprintf("first%d(%s)", f.n, f.src.Name()) }

func (f firstN) Synonyms(w string) []string {
	s := f.src.Synonyms(w)
	if len(s) > f.n {
		s = s[:f.n]
	}
	return s
}

// spacedWords passes texts to a sentence encoder with every word that holds
// a space (a space-inserted substitute) split into its parts, as an
// encoder reading the written text would see them.
type spacedWords struct{ SentenceEncoder }

// Similarity implements SentenceEncoder.
func (e spacedWords) Similarity(a, b []string) float64 {
	return e.SentenceEncoder.Similarity(splitSpaced(a), splitSpaced(b))
}

func splitSpaced(words []string) []string {
	split := false
	for _, w := range words {
		if strings.Contains(w, " ") {
			split = true
			break
		}
	}
	if !split {
		return words
	}
	out := make([]string, 0, len(words)+4)
	for _, w := range words {
		out = append(out, strings.Fields(w)...)
	}
	return out
}

// TextBugger's USE constraint in TextAttack is angular similarity
// 1 − arccos(cos)/π ≥ 0.8 (UniversalSentenceEncoder's default metric), i.e.
// cosine ≥ cos(0.2π) ≈ 0.809: the threshold applied to the encoder's
// cosine.
var textBuggerUSECos = math.Cos(0.2 * math.Pi)

// textBuggerK is Sub-W's k (the paper's top-k = 5).
const textBuggerK = 5

func buildTextBugger(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML {
		return nil, fmt.Errorf("textbugger is not part of the FTML protocol (its attacks are pwws, ga, pso, hla); use --protocol flat")
	}
	if err := needSubstitutes(r, "textbugger"); err != nil {
		return nil, err
	}
	var words lexicon.Source
	var dev []string
	switch {
	case r.Nearest == nil:
		words = firstN{src: r.Synonyms, n: textBuggerK}
		dev = append(dev, "Sub-W: the first 5 of the counter-fitted neighbour sets (k=8, squared distance ≤ 0.5, i.e. cosine ≥ 0.75) instead of the 5 nearest words, with no threshold, in GloVe (the paper; not available here) or in TextAttack's counter-fitted vectors (give --vectors)")
	case r.Nearest.same(textBuggerK, -1):
		words = r.Nearest.Source
		dev = append(dev, "Sub-W: the 5 nearest words in "+r.Nearest.Vectors+" (TextAttack's recipe: its counter-fitted vectors) instead of the paper's GloVe (not available here)")
	default:
		words = r.Nearest.Source
		dev = append(dev, "Sub-W: "+r.Nearest.String()+" instead of the 5 nearest words with no threshold (the paper: GloVe, not available here; TextAttack: counter-fitted vectors)")
	}
	var post []PostConstraint
	if r.Encoder != nil {
		post = append(post, SentenceSimilarity{Encoder: spacedWords{r.Encoder}, Threshold: textBuggerUSECos, AgainstOriginal: true})
		if !isUSE(r.Encoder) {
			dev = append(dev, useDeviation(r.Encoder, "the sentence-similarity constraint (TextAttack's angular similarity ≥ 0.8 with the whole original text, applied as cosine ≥ 0.809)"))
		}
	} else {
		dev = append(dev, "USE sentence-similarity constraint (angular similarity ≥ 0.8, i.e. cosine ≥ 0.809, with the whole original text) omitted (no sentence encoder: give --sentence-encoder DIR, --data with models/all-MiniLM-L6-v2, or --vectors for the mean-vector stand-in)")
	}
	dev = append(dev,
		"random positions (insert, delete, swap): each is drawn once per word from a hash of (seed 0, the word's index, the bug, the word), so runs are reproducible in any order and with any workers, and --seed does not change them; TextAttack draws from NumPy's global generator at every call",
		"a space-inserted word stays one position: the model reads its parts as two tokens (a word-vocabulary model their ids, UNK for unknown parts; a transformer re-tokenizes the written text), but it counts as one perturbed word and the positions after it keep their indices; TextAttack re-splits the text into words, counts two perturbed words and visits its importance order, computed on the original indices, shifted by one after the split",
		"bugs are made on the tokenizer's lower-cased word, so the perturbed text loses that word's capitals (TextAttack edits the word as written; its homoglyph table has no capitals)",
		"when several substitutes at the last position succeed, the one with the best goal score is kept; TextAttack keeps the one USE finds most similar to the original",
	)
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: TextBugger{Words: words},
			Pre:    []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.NLTKStopwords(), Desc: "nltk-english"}},
			Post:   post,
			Search: Greedy{Order: ByDelete}},
		Description: "TextBugger as TextAttack's textbugger recipe: the union of five bugs (a space inserted, a middle character deleted, two middle neighbours swapped, homoglyphs, the 5 nearest words), NLTK stop words, no repeat modification, USE similarity ≥ 0.8 with the original text, greedy by deletion importance",
		Deviations:  dev,
	}, nil
}
