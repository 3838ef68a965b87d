package lexicon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/textarmor/textarmor/internal/quote"
)

// POS is a WordNet part of speech. The zero value, Any, means all four.
type POS uint8

// Parts of speech. Adj covers both head adjectives ('a') and adjective
// satellites ('s'), as NLTK's wn.ADJ does: index.adj lists both kinds.
const (
	Any POS = iota
	Noun
	Verb
	Adj
	Adv
)

// posOrder is NLTK's POS_LIST, the order in which Any visits the parts of
// speech.
var posOrder = [...]POS{Noun, Verb, Adj, Adv}

// String returns WordNet's letter for p ("n", "v", "a", "r"), or "any".
func (p POS) String() string {
	switch p {
	case Noun:
		return "n"
	case Verb:
		return "v"
	case Adj:
		return "a"
	case Adv:
		return "r"
	case Any:
		return "any"
	}
	return fmt.Sprintf("POS(%d)", uint8(p))
}

// fileSuffix is the part of speech as WordNet names its files.
func (p POS) fileSuffix() string {
	return [...]string{Noun: "noun", Verb: "verb", Adj: "adj", Adv: "adv"}[p]
}

// ParsePOS reads a part of speech: a WordNet letter (n, v, a, s, r), a name
// (noun, verb, adj, adjective, adv, adverb), or "" / "any" for Any.
func ParsePOS(s string) (POS, error) {
	switch strings.ToLower(s) {
	case "", "any":
		return Any, nil
	case "n", "noun":
		return Noun, nil
	case "v", "verb":
		return Verb, nil
	case "a", "s", "adj", "adjective":
		return Adj, nil
	case "r", "adv", "adverb":
		return Adv, nil
	}
	return Any, fmt.Errorf("lexicon: unknown part of speech %q (want n, v, a, s, r or any)", s)
}

// PennPOS maps a Penn Treebank tag to a WordNet part of speech by its first
// letter (NN* noun, VB* verb, JJ* adjective, RB* adverb), as _get_wordnet_pos
// of the PWWS reference code does with spaCy's tags (some copies of that
// code keep only n and v, since no Penn tag starts with 'A'). ok is false
// for other tags.
func PennPOS(tag string) (p POS, ok bool) {
	if tag == "" {
		return Any, false
	}
	switch tag[0] {
	case 'N':
		return Noun, true
	case 'V':
		return Verb, true
	case 'J':
		return Adj, true
	case 'R':
		return Adv, true
	}
	return Any, false
}

// DebianWordNetDir is where Debian's wordnet-base package puts the database.
const DebianWordNetDir = "/usr/share/wordnet"

// DefaultWordNetDir returns $WORDNET_DIR, or DebianWordNetDir when it is
// unset.
func DefaultWordNetDir() string {
	if d := os.Getenv("WORDNET_DIR"); d != "" {
		return d
	}
	return DebianWordNetDir
}

// WordNet is the WordNet database (index, data and exception files of one
// dict directory), held in memory in the form synonym lookup needs: for
// each part of speech, lemma -> synsets and synset -> lemma names. It is
// read-only after OpenWordNet, so concurrent use is safe.
type WordNet struct {
	dir string
	pos [5]posDB // indexed by POS; pos[Any] is unused
}

type posDB struct {
	index   map[string][]int32  // lemma (lower case) -> synsets, in sense order
	synsets []synset            // in data-file order
	exc     map[string][]string // inflected form -> base forms
}

type synset struct {
	offset    int64
	satellite bool
	lemmas    []string
}

// Synset is one WordNet synset.
type Synset struct {
	POS       POS
	Satellite bool     // an adjective satellite ('s') rather than a head ('a')
	Offset    int64    // byte offset in data.<pos>, WordNet's synset id
	Lemmas    []string // lemma names in file order, syntactic markers removed
}

// OpenWordNet loads the WordNet 3.0 database files in dir: index.<pos>,
// data.<pos> and <pos>.exc for noun, verb, adj and adv (the layout of
// Princeton's dict/ folder and of Debian's wordnet-base). Licence lines (those
// starting with a space) are skipped. Every index entry must point at a
// synset line of the data file, and every data line's offset field must be
// its own byte offset (so a file converted to CRLF is caught); errors name
// the file and line.
func OpenWordNet(dir string) (*WordNet, error) {
	if st, err := os.Stat(filepath.Join(dir, "index.noun")); err != nil || st.IsDir() {
		if err == nil {
			err = errors.New("is a directory")
		}
		return nil, fmt.Errorf("lexicon: no WordNet database in %s (%v): install it with `apt-get install -y --no-install-recommends wordnet-base` or set WORDNET_DIR to a folder holding index.noun, data.noun, noun.exc, ...", dir, err)
	}
	wn := &WordNet{dir: dir}
	// The four parts of speech are independent files: load them in parallel.
	var wg sync.WaitGroup
	errs := make([]error, len(posOrder))
	for i, p := range posOrder {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = wn.loadPOS(p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return wn, nil
}

// Dir returns the directory the database was read from.
func (wn *WordNet) Dir() string { return wn.dir }

func (wn *WordNet) loadPOS(p POS) error {
	db := &wn.pos[p]
	byOffset, err := db.loadData(filepath.Join(wn.dir, "data."+p.fileSuffix()), p)
	if err != nil {
		return err
	}
	if err := db.loadIndex(filepath.Join(wn.dir, "index."+p.fileSuffix()), p, byOffset); err != nil {
		return err
	}
	return db.loadExceptions(filepath.Join(wn.dir, p.fileSuffix()+".exc"))
}

// lines calls f for each line of data (without its "\n") with its 1-based
// number and byte offset, stopping at the first error.
func lines(data []byte, f func(line []byte, num int, off int64) error) error {
	num := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		num++
		if err := f(data[off:off+end], num, int64(off)); err != nil {
			return err
		}
		off += end + 1
	}
	return nil
}

// isHeader reports whether a line is part of the licence header (or blank).
func isHeader(line []byte) bool { return len(line) == 0 || line[0] == ' ' }

// loadData reads the synset lines of a data file, keeping each synset's
// offset, type and lemma names (pointers, frames and gloss are not needed
// for synonyms and are skipped). It returns offset -> synset number.
func (db *posDB) loadData(path string, p POS) (map[int64]int32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lexicon: WordNet: %w", err)
	}
	byOffset := make(map[int64]int32, bytes.Count(data, []byte("\n")))
	var f fields
	err = lines(data, func(line []byte, num int, off int64) error {
		if isHeader(line) {
			return nil
		}
		bad := func(format string, args ...any) error { return lineError(path, num, line, format, args...) }
		f.reset(line)
		o, err := strconv.ParseInt(f.next(), 10, 64)
		if err != nil {
			return bad("synset offset %s is not a number", quoteShort(f.last))
		}
		if o != off {
			return bad("synset offset field %08d is not the line's byte offset %d (was the file modified, e.g. converted to CRLF?)", o, off)
		}
		f.next() // lex_filenum
		ss := f.next()
		sat := false
		switch {
		case ss == p.String():
		case p == Adj && ss == "s":
			sat = true
		default:
			return bad("synset type %s in a %s file", quoteShort(ss), p.fileSuffix())
		}
		cnt, err := strconv.ParseUint(f.next(), 16, 16)
		if err != nil || cnt == 0 {
			return bad("word count (two hex digits) %s", quoteShort(f.last))
		}
		s := synset{offset: o, satellite: sat, lemmas: make([]string, cnt)}
		for i := range s.lemmas {
			w := f.next()
			if _, err := strconv.ParseUint(f.next(), 16, 8); err != nil || w == "" {
				return bad("word %d of %d: want a word and a hex lex_id", i+1, cnt)
			}
			s.lemmas[i] = stripMarker(w)
		}
		if _, err := strconv.Atoi(f.next()); err != nil {
			return bad("pointer count after %d words: %s is not a number", cnt, quoteShort(f.last))
		}
		byOffset[o] = int32(len(db.synsets))
		db.synsets = append(db.synsets, s)
		return nil
	})
	return byOffset, err
}

// stripMarker removes an adjective's syntactic marker, as in "galore(ip)",
// the way NLTK does (regexp `(.*?)(\(.*\))?$`): from the first '(' when the
// word ends with ')'.
func stripMarker(w string) string {
	if strings.HasSuffix(w, ")") {
		if i := strings.IndexByte(w, '('); i >= 0 {
			return w[:i]
		}
	}
	return w
}

// loadIndex reads an index file:
// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
func (db *posDB) loadIndex(path string, p POS, byOffset map[int64]int32) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("lexicon: WordNet: %w", err)
	}
	db.index = make(map[string][]int32, bytes.Count(data, []byte("\n")))
	var f fields
	return lines(data, func(line []byte, num int, _ int64) error {
		if isHeader(line) {
			return nil
		}
		bad := func(format string, args ...any) error { return lineError(path, num, line, format, args...) }
		f.reset(line)
		lemma := f.next()
		if ps := f.next(); ps != p.String() {
			return bad("part of speech %s in a %s file", quoteShort(ps), p.fileSuffix())
		}
		// Each pointer symbol and synset offset takes at least two bytes of
		// the line (itself and a space): larger counts are refused before
		// they size a slice or a loop.
		nsyn, err := strconv.Atoi(f.next())
		if err != nil || nsyn <= 0 || nsyn > len(line)/2 {
			return bad("synset count %s (want a number from 1 to what the line has room for)", quoteShort(f.last))
		}
		nptr, err := strconv.Atoi(f.next())
		if err != nil || nptr < 0 || nptr > len(line)/2 {
			return bad("pointer count %s (want a number from 0 to what the line has room for)", quoteShort(f.last))
		}
		for i := 0; i < nptr; i++ {
			f.next()
		}
		if nsense, err := strconv.Atoi(f.next()); err != nil || nsense != nsyn {
			return bad("sense count %s differs from synset count %d", quoteShort(f.last), nsyn)
		}
		if _, err := strconv.Atoi(f.next()); err != nil {
			return bad("tagged sense count %s", quoteShort(f.last))
		}
		ids := make([]int32, nsyn)
		for i := range ids {
			o, err := strconv.ParseInt(f.next(), 10, 64)
			if err != nil {
				return bad("synset offset %d of %d for %s: %s is not a number", i+1, nsyn, quoteShort(lemma), quoteShort(f.last))
			}
			id, ok := byOffset[o]
			if !ok {
				return bad("synset offset %08d of %s is not a synset line of data.%s", o, quoteShort(lemma), p.fileSuffix())
			}
			ids[i] = id
		}
		if rest := f.next(); rest != "" {
			return bad("unexpected field %s after %d synset offsets", quoteShort(rest), nsyn)
		}
		// A repeated lemma replaces the earlier line, as in NLTK.
		db.index[lemma] = ids
		return nil
	})
}

// loadExceptions reads an exception list: inflected form, then its base
// forms.
func (db *posDB) loadExceptions(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("lexicon: WordNet: %w", err)
	}
	db.exc = make(map[string][]string)
	return lines(data, func(line []byte, num int, _ int64) error {
		fs := strings.Fields(string(line))
		if len(fs) == 0 {
			return nil
		}
		if len(fs) < 2 {
			return lineError(path, num, line, "want an inflected form and at least one base form, got %s", quoteShort(string(line)))
		}
		db.exc[fs[0]] = fs[1:]
		return nil
	})
}

// maxQuote is how many characters of a bad field or line an error quotes
// (escapes counted as written): a file of random bytes has "lines" of
// hundreds of bytes, which would bury the file name and line number.
const maxQuote = 40

// quoteShort quotes at most maxQuote characters of s (a random-bytes
// line would fill the screen).
func quoteShort(s string) string { return quote.Short(s, maxQuote) }

// lineError is an error about line num of path. A line that is not text
// (invalid UTF-8 or a NUL byte) is most likely a file that is not WordNet's
// at all, which the message says.
func lineError(path string, num int, line []byte, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if !utf8.Valid(line) || bytes.IndexByte(line, 0) >= 0 {
		msg += " (the line is not text: is this a WordNet database file?)"
	}
	return fmt.Errorf("%s:%d: %s", path, num, msg)
}

// fields splits a line on single spaces, as the WordNet files are laid out,
// without allocating a slice per line; runs of spaces are skipped.
type fields struct {
	rest []byte
	last string
}

func (f *fields) reset(line []byte) { f.rest = line }

// next returns the next field, or "" when none is left.
func (f *fields) next() string {
	i := 0
	for i < len(f.rest) && f.rest[i] == ' ' {
		i++
	}
	j := i
	for j < len(f.rest) && f.rest[j] != ' ' {
		j++
	}
	f.last = string(f.rest[i:j])
	f.rest = f.rest[j:]
	return f.last
}

// posList expands Any into NLTK's order.
func posList(p POS) []POS {
	if p == Any {
		return posOrder[:]
	}
	if p > Adv {
		return nil
	}
	return []POS{p}
}

// Detachment rules of WordNet's morphy (morphy(7WN)), in NLTK's order.
// Adverbs have none: they only go through the exception list.
var morphRules = [5][][2]string{
	Noun: {{"s", ""}, {"ses", "s"}, {"ves", "f"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// Morphy returns the base forms of form that WordNet has for pos, in the
// order of NLTK's internal _morphy; its first element is what NLTK's
// wn.morphy(form, pos) returns. For Any the lists of the four parts of speech
// are concatenated in NLTK's order (noun, verb, adj, adv) without repeats.
// As in NLTK, form is not lower-cased (WordNet's index is): Synsets does
// that.
//
// The algorithm: if form is in the exception list, the answer is form and
// its listed bases, kept if WordNet has them (and the rules are not tried);
// otherwise form and the forms one detachment rule away, kept if WordNet has
// them; if none is, the rules are applied again and again to the new forms
// until some are found or no rule applies.
func (wn *WordNet) Morphy(form string, pos POS) []string {
	var out []string
	for _, p := range posList(pos) {
		for _, b := range wn.morphy(form, p) {
			if !containsStr(out, b) {
				out = append(out, b)
			}
		}
	}
	return out
}

func (wn *WordNet) morphy(form string, p POS) []string {
	db := &wn.pos[p]
	known := func(forms []string) []string {
		var out []string
		for _, f := range forms {
			if _, ok := db.index[f]; ok && !containsStr(out, f) {
				out = append(out, f)
			}
		}
		return out
	}
	if exc, ok := db.exc[form]; ok {
		return known(append([]string{form}, exc...))
	}
	// Each level is deduplicated: NLTK keeps repeats, which changes nothing
	// in the result (only first occurrences matter) but can grow
	// exponentially on inputs such as "sssss...".
	apply := func(forms []string) []string {
		var out []string
		for _, f := range forms {
			for _, r := range morphRules[p] {
				if strings.HasSuffix(f, r[0]) {
					g := f[:len(f)-len(r[0])] + r[1]
					if !containsStr(out, g) {
						out = append(out, g)
					}
				}
			}
		}
		return out
	}
	forms := apply([]string{form})
	if res := known(append([]string{form}, forms...)); len(res) > 0 {
		return res
	}
	for len(forms) > 0 {
		forms = apply(forms)
		if res := known(forms); len(res) > 0 {
			return res
		}
	}
	return nil
}

// Synsets returns the synsets of word for pos, like NLTK's
// wn.synsets(word, pos): word is lower-cased, each base form from Morphy is
// looked up in the index, and its synsets are listed in WordNet's sense
// order; for Any, noun synsets come first, then verb, adjective and adverb
// ones. A synset reached through two base forms is listed once (NLTK would
// repeat it). Lemmas slices are copies.
func (wn *WordNet) Synsets(word string, pos POS) []Synset {
	word = strings.ToLower(word)
	var out []Synset
	for _, p := range posList(pos) {
		db := &wn.pos[p]
		var seen []int32
		for _, form := range wn.morphy(word, p) {
			for _, id := range db.index[form] {
				if containsInt32(seen, id) {
					continue
				}
				seen = append(seen, id)
				s := &db.synsets[id]
				out = append(out, Synset{POS: p, Satellite: s.satellite, Offset: s.offset, Lemmas: append([]string(nil), s.lemmas...)})
			}
		}
	}
	return out
}

func containsInt32(list []int32, x int32) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// Synonyms returns the lemma names of all synsets of word for pos (see
// Synsets), in order, without repeats and without word itself: NLTK's
// [l for s in wn.synsets(word, pos) for l in s.lemma_names()], which is the
// PWWS candidate list. Names keep WordNet's case and underscores
// ("domestic_dog", "Canis_familiaris"); callers that want single words drop
// those with '_'. The word itself is excluded ignoring case, since
// substituting "Good" for "good" changes nothing for a lower-cased model.
// Base forms are kept: "dog" is a candidate for "dogs".
func (wn *WordNet) Synonyms(word string, pos POS) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range posList(pos) {
		db := &wn.pos[p]
		var ids []int32
		for _, form := range wn.morphy(strings.ToLower(word), p) {
			for _, id := range db.index[form] {
				if containsInt32(ids, id) {
					continue
				}
				ids = append(ids, id)
				for _, l := range db.synsets[id].lemmas {
					if !seen[l] && !strings.EqualFold(l, word) {
						seen[l] = true
						out = append(out, l)
					}
				}
			}
		}
	}
	return out
}

// Source returns wn as a Source with a fixed part of speech, e.g. for
// attacks that do not tag their input (TextAttack's PWWS recipe uses Any).
func (wn *WordNet) Source(pos POS) Source { return wordNetSource{wn, pos} }

type wordNetSource struct {
	wn  *WordNet
	pos POS
}

func (s wordNetSource) Name() string {
	if s.pos == Any {
		return "wordnet"
	}
	return "wordnet-" + s.pos.String()
}

func (s wordNetSource) Synonyms(word string) []string { return s.wn.Synonyms(word, s.pos) }
