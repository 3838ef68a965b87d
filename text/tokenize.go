package text

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Token is one token of a string.
type Token struct {
	// Text is the normalised token (lower-cased; for "ftml" the right single
	// quotation mark U+2019 is also mapped to an ASCII apostrophe).
	Text string
	// Start and End are byte offsets of the token's source in the original
	// string: original[Start:End] is what the token was made from. For a
	// clitic split ("don't" -> "do", "n't") each part points at its own bytes.
	Start, End int
}

// Tokenizer splits a string into tokens.
type Tokenizer interface {
	Tokenize(s string) []Token
	Name() string
}

// Texts returns the Text of every token.
func Texts(toks []Token) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Text
	}
	return out
}

var (
	registryMu sync.RWMutex
	registry   = map[string]func() Tokenizer{
		"flat":       func() Tokenizer { return NewFlat() },
		"ftml":       func() Tokenizer { return NewFTML() },
		"whitespace": func() Tokenizer { return NewWhitespace() },
	}
)

// TokenizerNames lists the registered tokenizer names, sorted.
func TokenizerNames() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewTokenizer returns the registered tokenizer called name.
func NewTokenizer(name string) (Tokenizer, error) {
	registryMu.RLock()
	f, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("text: unknown tokenizer %q (valid: %s)", name, strings.Join(TokenizerNames(), ", "))
	}
	return f(), nil
}

// Register adds a tokenizer constructor under name, so that NewTokenizer (and
// everything configured by tokenizer name) can use it. Names are unique.
func Register(name string, f func() Tokenizer) error {
	if name == "" || f == nil {
		return fmt.Errorf("text: Register needs a name and a constructor")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		return fmt.Errorf("text: tokenizer %q is already registered", name)
	}
	registry[name] = f
	return nil
}

// ---------------------------------------------------------------------------
// whitespace

// Whitespace splits on Unicode whitespace and lower-cases.
type Whitespace struct{}

// NewWhitespace returns the "whitespace" tokenizer.
func NewWhitespace() *Whitespace { return &Whitespace{} }

// Name returns "whitespace".
func (*Whitespace) Name() string { return "whitespace" }

// Tokenize splits s on Unicode whitespace.
func (*Whitespace) Tokenize(s string) []Token {
	var toks []Token
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				toks = append(toks, Token{Text: strings.ToLower(s[start:i]), Start: start, End: i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		toks = append(toks, Token{Text: strings.ToLower(s[start:]), Start: start, End: len(s)})
	}
	return toks
}

// ---------------------------------------------------------------------------
// flat

// Flat is the FLAT reference cleaning (FLAT spec, Table 6):
//
//	lower-case; replace every character outside [A-Za-z0-9'`] by a space;
//	split the clitics 's 've n't 're 'd 'll off; split on whitespace.
//
// It works on bytes: every non-ASCII byte is a separator, exactly as the
// reference regex drops every non-ASCII character. Like the reference (which
// applies re.sub(r"\'s", " \'s", ...) and friends), clitics are split wherever
// they occur in a word, not only at its end: "o'reilly" gives "o", "'reilly".
// Unlike the reference, matching is case-insensitive ("DON'T" splits too),
// because the spec lower-cases first.
type Flat struct{}

// NewFlat returns the "flat" tokenizer.
func NewFlat() *Flat { return &Flat{} }

// Name returns "flat".
func (*Flat) Name() string { return "flat" }

func flatWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '\'' || c == '`'
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s[i:] starts with the lower-case ASCII p,
// ignoring ASCII case.
func hasPrefixFold(s string, i int, p string) bool {
	if len(s)-i < len(p) {
		return false
	}
	for j := 0; j < len(p); j++ {
		if lowerASCII(s[i+j]) != p[j] {
			return false
		}
	}
	return true
}

// flatSplitBefore reports whether the reference inserts a space before s[i].
func flatSplitBefore(s string, i int) bool {
	switch lowerASCII(s[i]) {
	case '\'':
		return hasPrefixFold(s, i+1, "s") || hasPrefixFold(s, i+1, "ve") || hasPrefixFold(s, i+1, "re") ||
			hasPrefixFold(s, i+1, "d") || hasPrefixFold(s, i+1, "ll")
	case 'n':
		return hasPrefixFold(s, i+1, "'t")
	}
	return false
}

// Tokenize applies the FLAT cleaning to s.
func (*Flat) Tokenize(s string) []Token {
	var toks []Token
	emit := func(a, b int) {
		buf := make([]byte, b-a)
		for j := a; j < b; j++ {
			buf[j-a] = lowerASCII(s[j])
		}
		toks = append(toks, Token{Text: string(buf), Start: a, End: b})
	}
	i := 0
	for i < len(s) {
		if !flatWordByte(s[i]) {
			i++
			continue
		}
		start := i
		for i < len(s) && flatWordByte(s[i]) {
			i++
		}
		// [start, i) is one run; cut it before every clitic.
		from := start
		for j := start + 1; j < i; j++ {
			if flatSplitBefore(s[:i], j) {
				emit(from, j)
				from = j
			}
		}
		emit(from, i)
	}
	return toks
}

// ---------------------------------------------------------------------------
// ftml

// FTML is the FTML reference preprocessing (FTML spec §8): lower-case, <br />
// as whitespace, NLTK/Treebank-style word tokenization, then drop tokens that
// are a single punctuation character.
//
// The Treebank rules are re-implemented (NLTK is not available in Go) on top
// of byte offsets:
//   - these always stand alone: ? ! ; @ # $ % & ( ) [ ] { } < > * " and the
//     typographic quotes “ ” „ « » ‘ and the ellipsis …;
//   - runs of two or more periods ("...") and of two or more hyphens ("--")
//     are tokens; single hyphens and slashes stay inside words;
//   - a comma or colon is split off unless a digit follows ("1,000", "3:30");
//   - a final period is split off a word unless the word has another period
//     ("u.s." stays, "end." gives "end"); NLTK would use its sentence splitter
//     here;
//   - quotes (' ` ’) at the start or end of a word are split off, unless the
//     word is itself a clitic;
//   - the clitics n't 's 'm 'd 'll 're 've are split off the end of a word,
//     repeatedly ("i'd've" gives "i", "'d", "'ve"); ’ counts as an apostrophe
//     and becomes ' in Token.Text;
//   - cannot, gonna, gotta, wanna, gimme, lemme are split in two as NLTK does.
//
// Treebank turns " into two-character tokens (two backticks or two
// apostrophes); here quotes keep their own text and, being
// single punctuation characters, are dropped. Tokens of two or more
// punctuation characters ("...", "--") are kept, as in the reference.
type FTML struct{}

// NewFTML returns the "ftml" tokenizer.
func NewFTML() *FTML { return &FTML{} }

// Name returns "ftml".
func (*FTML) Name() string { return "ftml" }

// brLen returns the length of a <br>, <br/> or <br /> tag (any case, any
// spaces before the slash and the >) at s[i:], or 0.
func brLen(s string, i int) int {
	if !hasPrefixFold(s, i, "<br") {
		return 0
	}
	j := i + 3
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
		j++
	}
	if j < len(s) && s[j] == '/' {
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
			j++
		}
	}
	if j < len(s) && s[j] == '>' {
		return j + 1 - i
	}
	return 0
}

func ftmlAlwaysSplit(r rune) bool {
	switch r {
	case '?', '!', ';', '@', '#', '$', '%', '&', '(', ')', '[', ']', '{', '}', '<', '>', '*', '"',
		'\u201c', '\u201d', '\u201e', '\u00ab', '\u00bb', '\u2018', '\u2026':
		return true
	}
	return false
}

func isQuoteRune(r rune) bool { return r == '\'' || r == '`' || r == '\u2019' }

// Tokenize applies the FTML preprocessing to s.
func (*FTML) Tokenize(s string) []Token {
	var toks []Token
	emit := func(a, b int) {
		if a >= b {
			return
		}
		src := s[a:b]
		if isSinglePunct(src) {
			return
		}
		t := strings.ToLower(src)
		if strings.ContainsRune(t, '\u2019') {
			t = strings.ReplaceAll(t, "\u2019", "'")
		}
		toks = append(toks, Token{Text: t, Start: a, End: b})
	}
	// Chunks are separated by whitespace and <br> tags.
	i, start := 0, -1
	for i < len(s) {
		if s[i] == '<' {
			if n := brLen(s, i); n > 0 {
				if start >= 0 {
					ftmlChunk(s, start, i, emit)
					start = -1
				}
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if start >= 0 {
				ftmlChunk(s, start, i, emit)
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		ftmlChunk(s, start, len(s), emit)
	}
	return toks
}

// isSinglePunct reports whether src is one punctuation character: ASCII
// punctuation (Python's string.punctuation, as in the reference) or a Unicode
// punctuation rune (typographic quotes, dashes, ellipsis).
func isSinglePunct(src string) bool {
	r, size := utf8.DecodeRuneInString(src)
	if size != len(src) || r == utf8.RuneError {
		return false
	}
	if r < utf8.RuneSelf {
		return strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r)
	}
	return unicode.IsPunct(r)
}

// ftmlChunk tokenizes one whitespace-free chunk s[a:b].
func ftmlChunk(s string, a, b int, emit func(a, b int)) {
	word := -1 // start of the current word, or -1
	flush := func(end int) {
		if word >= 0 {
			ftmlWord(s, word, end, emit)
			word = -1
		}
	}
	i := a
	for i < b {
		r, size := utf8.DecodeRuneInString(s[i:b])
		switch {
		case ftmlAlwaysSplit(r):
			flush(i)
			emit(i, i+size)
			i += size
			continue
		case r == '.' && i+1 < b && s[i+1] == '.':
			flush(i)
			j := i
			for j < b && s[j] == '.' {
				j++
			}
			emit(i, j)
			i = j
			continue
		case r == '-' && i+1 < b && s[i+1] == '-':
			flush(i)
			j := i
			for j < b && s[j] == '-' {
				j++
			}
			emit(i, j)
			i = j
			continue
		case r == ',' || r == ':':
			if i+1 < b && s[i+1] >= '0' && s[i+1] <= '9' && word >= 0 {
				break // "1,000", "3:30" stay whole
			}
			flush(i)
			emit(i, i+1)
			i++
			continue
		}
		if word < 0 {
			word = i
		}
		i += size
	}
	flush(b)
}

// quoteAt returns the size of a quote rune at s[i:b], or 0.
func quoteAt(s string, i, b int) int {
	r, size := utf8.DecodeRuneInString(s[i:b])
	if isQuoteRune(r) {
		return size
	}
	return 0
}

// quoteBefore returns the size of a quote rune ending at s[:b] (and after a),
// or 0.
func quoteBefore(s string, a, b int) int {
	r, size := utf8.DecodeLastRuneInString(s[a:b])
	if isQuoteRune(r) {
		return size
	}
	return 0
}

// hasSuffixFold reports whether w ends with c, ignoring ASCII case only (so
// that the byte length of the match is len(c)).
func hasSuffixFold(w, c string) bool {
	if len(w) < len(c) {
		return false
	}
	return hasPrefixFold(w, len(w)-len(c), c)
}

var ftmlClitics = []string{
	"n't", "n\u2019t", "'ll", "'re", "'ve", "\u2019ll", "\u2019re", "\u2019ve",
	"'s", "'m", "'d", "\u2019s", "\u2019m", "\u2019d",
}

// cliticLen returns the byte length of the clitic at the end of w, or 0. w
// may use ' or ’ as apostrophe.
func cliticLen(w string) int {
	for _, c := range ftmlClitics {
		if hasSuffixFold(w, c) {
			return len(c)
		}
	}
	return 0
}

var ftmlContractions = []string{"cannot", "gonna", "gotta", "wanna", "gimme", "lemme"}

// isContraction reports whether w is a word that Treebank splits after its
// third byte.
func isContraction(w string) bool {
	for _, c := range ftmlContractions {
		if len(w) == len(c) && hasPrefixFold(w, 0, c) {
			return true
		}
	}
	return false
}

// ftmlWord splits quotes, a final period and clitics off s[a:b].
func ftmlWord(s string, a, b int, emit func(a, b int)) {
	// Leading quotes, unless the rest is a clitic such as "'s" (SST and other
	// pre-tokenised text keeps clitics as words).
	for a < b {
		n := quoteAt(s, a, b)
		if n == 0 || cliticLen(s[a:b]) == b-a {
			break
		}
		emit(a, a+n)
		a += n
	}
	// Trailing quotes and the final period, collected right to left.
	var tail [][2]int
	for a < b {
		if n := quoteBefore(s, a, b); n > 0 && b-n > a {
			if cliticLen(s[a:b]) == b-a {
				break
			}
			tail = append(tail, [2]int{b - n, b})
			b -= n
			continue
		}
		if s[b-1] == '.' && b-1 > a && !strings.Contains(s[a:b-1], ".") {
			tail = append(tail, [2]int{b - 1, b})
			b--
			continue
		}
		break
	}
	// Clitics off the end, right to left.
	for b > a {
		n := cliticLen(s[a:b])
		if n == 0 || n >= b-a {
			break
		}
		// Treebank wants a non-quote before the clitic.
		if quoteBefore(s, a, b-n) > 0 {
			break
		}
		tail = append(tail, [2]int{b - n, b})
		b -= n
	}
	if a < b {
		if isContraction(s[a:b]) {
			emit(a, a+3)
			emit(a+3, b)
		} else {
			emit(a, b)
		}
	}
	for k := len(tail) - 1; k >= 0; k-- {
		emit(tail[k][0], tail[k][1])
	}
}

// ---------------------------------------------------------------------------

// Detokenize rebuilds original with the source span of token i replaced by
// replace[i]; all other bytes are kept as they are. Replacements are applied
// in order of Start; an index out of range, a span outside original, or a span
// overlapping an earlier replaced span is ignored, so the result is always
// well-formed.
func Detokenize(original string, toks []Token, replace map[int]string) string {
	if len(replace) == 0 {
		return original
	}
	idx := make([]int, 0, len(replace))
	for i := range replace {
		if i >= 0 && i < len(toks) {
			t := toks[i]
			if t.Start >= 0 && t.Start <= t.End && t.End <= len(original) {
				idx = append(idx, i)
			}
		}
	}
	sort.Slice(idx, func(x, y int) bool {
		tx, ty := toks[idx[x]], toks[idx[y]]
		if tx.Start != ty.Start {
			return tx.Start < ty.Start
		}
		return idx[x] < idx[y]
	})
	var sb strings.Builder
	sb.Grow(len(original))
	pos := 0
	for _, i := range idx {
		t := toks[i]
		if t.Start < pos {
			continue
		}
		sb.WriteString(original[pos:t.Start])
		sb.WriteString(replace[i])
		pos = t.End
	}
	sb.WriteString(original[pos:])
	return sb.String()
}
