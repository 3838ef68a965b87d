package text

import (
	"fmt"
	"strings"
	"unicode"
)

// WithTokens returns a tokenizer whose vocabulary is w's followed by tokens
// (ids Size(), Size()+1, …), with w's options. Greedy longest-match
// WordPiece then reads each added word as one token: FTML's vocabulary
// supplement for BERT (FTML spec §7.3). Empty, repeated and existing
// tokens are refused, and so are tokens the pre-tokenizer could never
// produce (with white space, or starting with the continuing prefix).
func (w *WordPiece) WithTokens(tokens []string) (*WordPiece, error) {
	seen := make(map[string]bool, len(tokens))
	for _, tok := range tokens {
		switch {
		case tok == "":
			return nil, fmt.Errorf("text: an added token is empty")
		case seen[tok]:
			return nil, fmt.Errorf("text: added token %q appears twice", tok)
		case strings.HasPrefix(tok, w.prefix):
			return nil, fmt.Errorf("text: added token %q starts with the continuing prefix %q", tok, w.prefix)
		case strings.IndexFunc(tok, unicode.IsSpace) >= 0:
			return nil, fmt.Errorf("text: added token %q holds white space", tok)
		}
		if _, ok := w.index[tok]; ok {
			return nil, fmt.Errorf("text: added token %q is already in the vocabulary (id %d)", tok, w.index[tok])
		}
		seen[tok] = true
	}
	return NewWordPiece(append(w.Vocab(), tokens...), w.Options())
}

// Words returns the pre-tokenized, normalised words of s (lower-cased and
// accent-stripped as the tokenizer does, split at white space and
// punctuation), spelled by joining each word's pieces. A word the
// tokenizer reads as the unknown token has no spelling and is left out, as
// are special tokens.
func (w *WordPiece) Words(s string) []string {
	pieces := w.Tokenize(s)
	var out []string
	var b strings.Builder
	word, unknown := -1, false
	flush := func() {
		if word >= 0 && !unknown && b.Len() > 0 {
			out = append(out, b.String())
		}
		b.Reset()
		unknown = false
	}
	for _, p := range pieces {
		if p.Word != word {
			flush()
			word = p.Word
		}
		switch {
		case p.ID == w.unk:
			unknown = true
		case w.isSpecial(p.ID):
			unknown = true // a literal [SEP] in the text is not a word
		default:
			b.WriteString(strings.TrimPrefix(p.Text, w.prefix))
		}
	}
	flush()
	return out
}

// isSpecial reports whether id is one of the special tokens matched
// literally in the input.
func (w *WordPiece) isSpecial(id int32) bool {
	tok := w.Token(id)
	for _, sp := range w.specials {
		if sp == tok {
			return true
		}
	}
	return false
}

// Continues reports whether id is a continuation piece ("##ing"): it
// extends the word of the piece before it.
func (w *WordPiece) Continues(id int32) bool {
	return id >= 0 && int(id) < len(w.vocab) && strings.HasPrefix(w.vocab[id], w.prefix) && len(w.vocab[id]) > len(w.prefix)
}
