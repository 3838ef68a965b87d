package text

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file implements the BERT tokenizer as the Hugging Face fast tokenizer
// (tokenizers' BertNormalizer, BertPreTokenizer and WordPiece, with
// transformers' BertTokenizer around them) runs it, so that a model trained
// in Python sees the same ids from Go:
//
//  1. Special-token strings ("[MASK]", "[SEP]", ...) in the input are matched
//     literally, leftmost-longest, and become one piece each.
//  2. Clean: NUL, U+FFFD (and invalid UTF-8) and characters of categories
//     Cc, Cf and Co are dropped; unassigned code points are kept. Tab,
//     newline, carriage return and every White_Space character become word
//     boundaries; vertical tab, form feed and U+0085 are Cc, so they are
//     dropped ("a\vb" is one word).
//  3. Chinese characters (the CJK ideograph ranges of isChineseChar) are
//     words of their own.
//  4. Strip accents: NFD, then drop the non-spacing marks (Mn).
//  5. Lower-case, character by character (U+0130 gives "i" + U+0307, as in
//     Rust's char::to_lowercase).
//  6. Split on white space (dropped) and punctuation (kept as one-character
//     words): ASCII 33-47, 58-64, 91-96, 123-126 and Unicode category P.
//  7. WordPiece: greedy longest match first, continuation pieces carrying the
//     "##" prefix; a word of more than MaxWordChars characters (counted after
//     normalisation), or one that cannot be covered by vocabulary pieces, is
//     a single unknown piece.
//
// Character classes come from Go's unicode tables and
// golang.org/x/text/unicode/norm (Unicode 15). The reference uses older
// tables (Unicode 8 categories, Unicode 9 NFD) and Rust's newer case
// mapping, so about 570 rare code points, all assigned or re-categorised
// since Unicode 8 (Adlam, Newa, new Arabic marks, Egyptian format controls,
// a few Unicode 16 case pairs), are classified differently; every other code
// point gives the same ids.

// WordPieceOptions configures a WordPiece tokenizer; with the vocabulary it
// is all a model file needs to rebuild its tokenizer (it marshals to JSON
// with snake_case names). Start from DefaultWordPieceOptions: the zero value is a
// cased tokenizer without Chinese-character splitting (empty strings and 0 do
// take their defaults).
type WordPieceOptions struct {
	// Lowercase lower-cases the text (do_lower_case).
	Lowercase bool `json:"lowercase"`
	// StripAccents removes accents (NFD, then drop Mn marks). nil follows
	// Lowercase, as in BERT; an explicit value overrides it.
	StripAccents *bool `json:"strip_accents,omitempty"`
	// ChineseChars puts every CJK ideograph in a word of its own
	// (tokenize_chinese_chars).
	ChineseChars bool `json:"chinese_chars"`
	// MaxWordChars is the longest word, in characters after normalisation,
	// that is split into pieces; longer words are Unk
	// (max_input_chars_per_word). 0 means 100.
	MaxWordChars int `json:"max_word_chars,omitempty"`
	// Unk, CLS, SEP, Pad and Mask are the special tokens; each must be in the
	// vocabulary. Empty means "[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]".
	Unk  string `json:"unk,omitempty"`
	CLS  string `json:"cls,omitempty"`
	SEP  string `json:"sep,omitempty"`
	Pad  string `json:"pad,omitempty"`
	Mask string `json:"mask,omitempty"`
	// ContinuingPrefix marks pieces that continue a word. Empty means "##".
	ContinuingPrefix string `json:"continuing_prefix,omitempty"`
	// NeverSplit lists further vocabulary tokens that, like the special
	// tokens, are matched literally in the input and kept whole (Hugging Face
	// added tokens with normalized=false).
	NeverSplit []string `json:"never_split,omitempty"`
	// SplitSpecialTokens tokenizes special-token strings found in the input
	// as ordinary text ("[MASK]" gives "[", "mask", "]"), like
	// split_special_tokens=True in transformers. By default they are kept
	// whole, as Hugging Face does.
	SplitSpecialTokens bool `json:"split_special_tokens,omitempty"`
	// ModelMaxLength is the longest sequence the model accepts
	// (model_max_length), for callers choosing maxLen; 0 means unknown.
	// Encode does not apply it by itself.
	ModelMaxLength int `json:"model_max_length,omitempty"`
}

// DefaultWordPieceOptions returns the settings of bert-base-uncased:
// lower-casing, accent stripping, Chinese-character splitting, 100-character
// words and the usual special tokens.
func DefaultWordPieceOptions() WordPieceOptions {
	return WordPieceOptions{
		Lowercase:        true,
		ChineseChars:     true,
		MaxWordChars:     100,
		Unk:              "[UNK]",
		CLS:              "[CLS]",
		SEP:              "[SEP]",
		Pad:              "[PAD]",
		Mask:             "[MASK]",
		ContinuingPrefix: "##",
	}
}

// Piece is one WordPiece token.
type Piece struct {
	// ID is the vocabulary id.
	ID int32
	// Text is the vocabulary entry ("play", "##ing", "[UNK]").
	Text string
	// Start and End are the byte span, in the original string, of the
	// characters the piece was made from, so pieces can be mapped back to
	// words: "É" and "e" + U+0301 give "e" pointing at the accented letter; a
	// Hangul syllable decomposed into several jamo pieces gives each the span
	// of the syllable; an Unk word covers the whole word. Characters dropped by
	// the normaliser (controls, accents) inside a piece are inside its span;
	// at its edges they are not. Special tokens added by Encode have -1, -1.
	Start, End int
	// Word is the index of the pre-tokenized word (white-space and
	// punctuation split) the piece belongs to, counted from 0 in each
	// sequence; -1 for special tokens added by Encode.
	Word int
}

// Encoding is a model input: ids with their pieces.
type Encoding struct {
	// IDs are the token ids, special tokens included.
	IDs []int32
	// TypeIDs are the segment ids: 0 for the first sequence (with [CLS] and
	// its [SEP]), 1 for the second.
	TypeIDs []int32
	// Pieces has one entry per id; spans of the first and second sequence
	// both point into their own input string.
	Pieces []Piece
	// Truncated is the number of pieces dropped to respect maxLen.
	Truncated int
}

// WordPiece is a BERT tokenizer: normalisation, pre-tokenization and
// WordPiece, compatible with Hugging Face's BertTokenizer. It is safe for
// concurrent use.
type WordPiece struct {
	vocab    []string
	index    map[string]int32
	opts     WordPieceOptions
	lower    bool
	strip    bool
	chinese  bool
	maxChars int
	prefix   string
	maxTok   int // longest vocabulary entry, in bytes

	unk, cls, sep, pad, mask int32

	specials     []string // matched literally in the input, longest first
	specialFirst [256]bool
	scratch      sync.Pool
}

// NewWordPiece builds a tokenizer for vocab (vocab[i] has id i). Tokens must
// be non-empty and distinct, and every special token must be in vocab.
func NewWordPiece(vocab []string, opts WordPieceOptions) (*WordPiece, error) {
	def := DefaultWordPieceOptions()
	fill := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	fill(&opts.Unk, def.Unk)
	fill(&opts.CLS, def.CLS)
	fill(&opts.SEP, def.SEP)
	fill(&opts.Pad, def.Pad)
	fill(&opts.Mask, def.Mask)
	fill(&opts.ContinuingPrefix, def.ContinuingPrefix)
	if opts.MaxWordChars == 0 {
		opts.MaxWordChars = def.MaxWordChars
	}
	if opts.MaxWordChars < 0 {
		return nil, fmt.Errorf("text: WordPiece MaxWordChars %d is negative", opts.MaxWordChars)
	}
	if len(vocab) == 0 {
		return nil, errors.New("text: WordPiece vocabulary is empty")
	}
	if int64(len(vocab)) > math.MaxInt32 {
		return nil, fmt.Errorf("text: WordPiece vocabulary too large (%d tokens)", len(vocab))
	}
	w := &WordPiece{
		vocab:    append([]string(nil), vocab...),
		index:    make(map[string]int32, len(vocab)),
		lower:    opts.Lowercase,
		strip:    opts.Lowercase,
		chinese:  opts.ChineseChars,
		maxChars: opts.MaxWordChars,
		prefix:   opts.ContinuingPrefix,
	}
	if opts.StripAccents != nil {
		w.strip = *opts.StripAccents
		sa := *opts.StripAccents
		opts.StripAccents = &sa // not shared with the caller
	}
	opts.NeverSplit = append([]string(nil), opts.NeverSplit...)
	w.opts = opts
	for i, tok := range w.vocab {
		if tok == "" {
			return nil, fmt.Errorf("text: WordPiece vocabulary token %d is empty", i)
		}
		if j, dup := w.index[tok]; dup {
			return nil, fmt.Errorf("text: WordPiece vocabulary token %q appears twice (ids %d and %d)", tok, j, i)
		}
		w.index[tok] = int32(i)
		if len(tok) > w.maxTok {
			w.maxTok = len(tok)
		}
	}
	for _, sp := range []struct {
		name, tok string
		id        *int32
	}{
		{"unknown (Unk)", opts.Unk, &w.unk},
		{"classifier (CLS)", opts.CLS, &w.cls},
		{"separator (SEP)", opts.SEP, &w.sep},
		{"padding (Pad)", opts.Pad, &w.pad},
		{"mask (Mask)", opts.Mask, &w.mask},
	} {
		id, ok := w.index[sp.tok]
		if !ok {
			return nil, fmt.Errorf("text: WordPiece vocabulary lacks the %s token %q", sp.name, sp.tok)
		}
		*sp.id = id
	}
	seen := map[string]bool{}
	for _, tok := range append([]string{opts.Unk, opts.CLS, opts.SEP, opts.Pad, opts.Mask}, opts.NeverSplit...) {
		if _, ok := w.index[tok]; !ok {
			return nil, fmt.Errorf("text: WordPiece NeverSplit token %q is not in the vocabulary", tok)
		}
		if seen[tok] {
			continue
		}
		seen[tok] = true
		if !opts.SplitSpecialTokens {
			w.specials = append(w.specials, tok)
			w.specialFirst[tok[0]] = true
		}
	}
	// Longest first, so that the first match at a position is the longest.
	sort.SliceStable(w.specials, func(i, j int) bool { return len(w.specials[i]) > len(w.specials[j]) })
	w.scratch.New = func() any { return new(wpScratch) }
	return w, nil
}

// Options returns the settings in effect (defaults filled in).
func (w *WordPiece) Options() WordPieceOptions {
	o := w.opts
	if o.StripAccents != nil {
		sa := *o.StripAccents
		o.StripAccents = &sa
	}
	o.NeverSplit = append([]string(nil), o.NeverSplit...)
	return o
}

// ID returns the id of a vocabulary token.
func (w *WordPiece) ID(token string) (int32, bool) {
	id, ok := w.index[token]
	return id, ok
}

// Token returns the vocabulary token with the given id, or the unknown token
// for an id out of range.
func (w *WordPiece) Token(id int32) string {
	if id < 0 || int(id) >= len(w.vocab) {
		return w.vocab[w.unk]
	}
	return w.vocab[id]
}

// Decode writes ids back as text: the special tokens ([CLS], [SEP],
// padding) dropped, each continuation piece ("##ing") joined to the piece
// before it, words separated by spaces (so "do n't" stays split: the
// pre-tokenizer's boundaries are not undone).
func (w *WordPiece) Decode(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		if id == w.cls || id == w.sep || id == w.pad {
			continue
		}
		tok := w.Token(id)
		if rest, ok := strings.CutPrefix(tok, w.prefix); ok && b.Len() > 0 {
			b.WriteString(rest)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// Size returns the number of vocabulary entries (the model's embedding rows).
func (w *WordPiece) Size() int { return len(w.vocab) }

// Vocab returns a copy of the vocabulary (index = id).
func (w *WordPiece) Vocab() []string { return append([]string(nil), w.vocab...) }

// UnkID is the id of the unknown token.
func (w *WordPiece) UnkID() int32 { return w.unk }

// CLSID is the id of the classifier token that starts every encoding.
func (w *WordPiece) CLSID() int32 { return w.cls }

// SEPID is the id of the separator token that ends every sequence.
func (w *WordPiece) SEPID() int32 { return w.sep }

// PadID is the id batchers pad with.
func (w *WordPiece) PadID() int32 { return w.pad }

// MaskID is the id of the mask token (masked-language-model attacks).
func (w *WordPiece) MaskID() int32 { return w.mask }

// ---------------------------------------------------------------------------
// character classes

// isWPControl reports whether the cleaner drops r: NUL, U+FFFD and category C
// other than tab, newline and carriage return.
func isWPControl(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	}
	// Not unicode.C, which also holds unassigned code points: the reference
	// keeps those (they become Unk).
	return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// isWPPunct is BERT's punctuation: the ASCII ranges 33-47, 58-64, 91-96,
// 123-126 and Unicode category P.
func isWPPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126
	}
	return unicode.IsPunct(r)
}

// isChineseChar reports whether r is a CJK ideograph. The ranges are those of
// the Hugging Face fast tokenizer, which differ from the original BERT code in
// one place: U+2B820-U+2B91F (the start of Extension E) is not included.
func isChineseChar(r rune) bool {
	switch {
	case r < 0x3400:
		return false
	case r <= 0x4DBF:
		return true
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0xF900 && r <= 0xFAFF:
		return true
	case r >= 0x20000 && r <= 0x2A6DF, r >= 0x2A700 && r <= 0x2B73F, r >= 0x2B740 && r <= 0x2B81F,
		r >= 0x2B920 && r <= 0x2CEAF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// asciiClass classifies ASCII bytes for the fast path.
var asciiClass = func() (c [128]uint8) {
	for b := 0; b < 128; b++ {
		r := rune(b)
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == ' ':
			c[b] = asciiSpace
		case isWPControl(r):
			c[b] = asciiDrop
		case isWPPunct(r):
			c[b] = asciiPunct
		default:
			c[b] = asciiWord
		}
	}
	return c
}()

const (
	asciiWord uint8 = iota
	asciiSpace
	asciiDrop
	asciiPunct
)

// ---------------------------------------------------------------------------
// tokenization

// wpScratch holds the normalised bytes of the current word and, for each
// byte, the span of the original character it came from.
type wpScratch struct {
	word   []byte
	ws, we []int32
	nchars int
	nfd    []byte
	cand   []byte
	// Accent stripping: the pending run of combining characters (NFD
	// reorders them) and the span of the last original character consumed.
	run      []nfdEntry
	slots    [][2]int32
	lastSpan [2]int32
}

// nfdEntry is one character of NFD output awaiting canonical reordering.
type nfdEntry struct {
	r     rune
	ccc   uint8
	added bool // not the first character of its source's decomposition
	a, b  int32
}

// wpState is one tokenization in progress.
type wpState struct {
	w    *WordPiece
	sc   *wpScratch
	out  []Piece
	base int // added to every span
	word int // next word index
}

func (w *WordPiece) getScratch() *wpScratch { return w.scratch.Get().(*wpScratch) }

// Tokenize splits s into pieces, without special tokens and without
// truncation. Spans point into s.
func (w *WordPiece) Tokenize(s string) []Piece {
	st := wpState{w: w, sc: w.getScratch(), out: make([]Piece, 0, len(s)/4+1)}
	st.run(s)
	w.scratch.Put(st.sc)
	return st.out
}

// run tokenizes s, appending to st.out.
func (st *wpState) run(s string) {
	w, sc := st.w, st.sc
	sc.word, sc.ws, sc.we, sc.nchars, sc.run = sc.word[:0], sc.ws[:0], sc.we[:0], 0, sc.run[:0]
	base := int32(st.base)
	sc.lastSpan = [2]int32{max(base-1, 0), base} // the joining space in EncodeWords
	for i := 0; i < len(s); {
		c := s[i]
		if w.specialFirst[c] {
			if n := w.matchSpecial(s[i:]); n > 0 {
				st.endRun()
				st.flush()
				id := w.index[s[i:i+n]]
				st.out = append(st.out, Piece{ID: id, Text: w.vocab[id], Start: st.base + i, End: st.base + i + n, Word: st.word})
				st.word++
				i += n
				sc.lastSpan = [2]int32{base + int32(i), base + int32(i)}
				continue
			}
		}
		if c < utf8.RuneSelf {
			a := base + int32(i)
			i++
			class := asciiClass[c]
			if class == asciiDrop {
				continue
			}
			if len(sc.run) > 0 {
				st.endRun()
			}
			switch class {
			case asciiWord:
				if w.lower && c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				sc.word = append(sc.word, c)
				sc.ws = append(sc.ws, a)
				sc.we = append(sc.we, a+1)
				sc.nchars++
			case asciiSpace:
				st.flush()
			case asciiPunct:
				st.flush()
				st.appendRune(rune(c), a, a+1)
				st.flush()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		a, b := base+int32(i), base+int32(i+size)
		src := s[i : i+size]
		i += size
		if isWPControl(r) {
			continue
		}
		if unicode.IsSpace(r) {
			st.endRun()
			st.flush()
			continue
		}
		cjk := w.chinese && isChineseChar(r)
		if cjk {
			st.endRun()
			st.flush()
		}
		if w.strip && r >= 0xC0 {
			st.decomposed(src, a, b)
		} else {
			st.endRun()
			st.normalized(r, a, b)
		}
		if cjk {
			st.endRun()
			st.flush()
		}
	}
	st.endRun()
	st.flush()
}

// matchSpecial returns the length of the longest special token at the start
// of s, or 0.
func (w *WordPiece) matchSpecial(s string) int {
	for _, sp := range w.specials {
		if strings.HasPrefix(s, sp) {
			return len(sp)
		}
	}
	return 0
}

// decomposed handles a character when accents are stripped: NFD, drop Mn,
// then lower-case. src is the character, [a, b) its original span.
// Combining characters (non-zero combining class) wait in a run until the
// next starter, because NFD puts them in canonical order.
func (st *wpState) decomposed(src string, a, b int32) {
	sc := st.sc
	sc.nfd = norm.NFD.AppendString(sc.nfd[:0], src)
	for j, k := 0, 0; j < len(sc.nfd); k++ {
		d, n := utf8.DecodeRune(sc.nfd[j:])
		var ccc uint8
		if d >= 0x300 {
			ccc = norm.NFD.Properties(sc.nfd[j : j+n]).CCC()
		}
		j += n
		if ccc != 0 {
			sc.run = append(sc.run, nfdEntry{r: d, ccc: ccc, added: k > 0, a: a, b: b})
			continue
		}
		st.endRun()
		span := sc.lastSpan
		if k == 0 {
			span = [2]int32{a, b}
			sc.lastSpan = span
		}
		if d >= 0x300 && unicode.Is(unicode.Mn, d) {
			continue
		}
		st.normalized(d, span[0], span[1])
	}
}

// endRun puts the pending combining characters in canonical order and adds
// those that are kept. Like the Hugging Face tokenizer, which aligns NFD
// output to the input position by position, the i-th character of the run
// that starts a decomposition takes the span of the i-th such character in
// input order, and the others take the span of the last one taken.
func (st *wpState) endRun() {
	sc := st.sc
	run := sc.run
	if len(run) == 0 {
		return
	}
	sc.slots = sc.slots[:0]
	for _, e := range run {
		if !e.added {
			sc.slots = append(sc.slots, [2]int32{e.a, e.b})
		}
	}
	// Stable insertion sort by combining class (runs are short).
	for i := 1; i < len(run); i++ {
		for j := i; j > 0 && run[j-1].ccc > run[j].ccc; j-- {
			run[j-1], run[j] = run[j], run[j-1]
		}
	}
	k := 0
	for _, e := range run {
		if !e.added {
			sc.lastSpan = sc.slots[k]
			k++
		}
		if unicode.Is(unicode.Mn, e.r) {
			continue
		}
		st.normalized(e.r, sc.lastSpan[0], sc.lastSpan[1])
	}
	sc.run = run[:0]
}

// normalized lower-cases r (if asked) and adds it to the current word, or as
// a word of its own for punctuation. [a, b) is its original span.
func (st *wpState) normalized(r rune, a, b int32) {
	if st.w.lower {
		if r == 0x130 { // İ: Rust's char::to_lowercase gives "i" + U+0307
			st.appendRune('i', a, b)
			r = 0x307
		} else {
			r = unicode.ToLower(r)
		}
	}
	if isWPPunct(r) {
		st.flush()
		st.appendRune(r, a, b)
		st.flush()
		return
	}
	st.appendRune(r, a, b)
}

// appendRune adds r, made from the original bytes [a, b), to the word.
func (st *wpState) appendRune(r rune, a, b int32) {
	sc := st.sc
	n := len(sc.word)
	sc.word = utf8.AppendRune(sc.word, r)
	for ; n < len(sc.word); n++ {
		sc.ws = append(sc.ws, a)
		sc.we = append(sc.we, b)
	}
	sc.nchars++
}

// flush splits the current word into pieces.
func (st *wpState) flush() {
	sc := st.sc
	word := sc.word
	if len(word) == 0 {
		return
	}
	st.piece(word)
	sc.word, sc.ws, sc.we, sc.nchars = sc.word[:0], sc.ws[:0], sc.we[:0], 0
	st.word++
}

// piece appends the pieces of the normalised word, or one unknown piece.
func (st *wpState) piece(word []byte) {
	sc, w := st.sc, st.w
	wordStart, wordEnd := int(sc.ws[0]), int(sc.we[len(word)-1])
	unk := Piece{ID: w.unk, Text: w.vocab[w.unk], Start: wordStart, End: wordEnd, Word: st.word}
	if sc.nchars > w.maxChars {
		st.out = append(st.out, unk)
		return
	}
	first := len(st.out)
	for start := 0; start < len(word); {
		// key[:off+end] is the lookup key for word[start:end]: the word itself
		// at the start, the continuing prefix and the rest of the word after.
		key, off := word, 0
		if start > 0 {
			off = len(w.prefix) - start
			stop := min(len(word), start+max(w.maxTok-len(w.prefix), 0))
			sc.cand = append(append(sc.cand[:0], w.prefix...), word[start:stop]...)
			key = sc.cand
		}
		end := len(word)
		if off+end > w.maxTok { // no vocabulary entry is that long
			end = w.maxTok - off
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		found := false
		var id int32
		for end > start {
			if id, found = w.index[string(key[:off+end])]; found {
				break
			}
			_, size := utf8.DecodeLastRune(word[start:end])
			end -= size
		}
		if !found {
			st.out = append(st.out[:first], unk)
			return
		}
		st.out = append(st.out, Piece{ID: id, Text: w.vocab[id], Start: int(sc.ws[start]), End: int(sc.we[end-1]), Word: st.word})
		start = end
	}
}

// ---------------------------------------------------------------------------
// encoding
