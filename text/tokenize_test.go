package text

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustTokenizer(t testing.TB, name string) Tokenizer {
	t.Helper()
	tk, err := NewTokenizer(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestTokenizers(t *testing.T) {
	tests := []struct {
		tok, in string
		want    []string
	}{
		// flat: FLAT Table 6 regex cleaning.
		{"flat", "", nil},
		{"flat", "   \t\n ", nil},
		{"flat", "Hello, World!", []string{"hello", "world"}},
		{"flat", "don't", []string{"do", "n't"}},
		{"flat", "It's", []string{"it", "'s"}},
		{"flat", "we've they're I'd you'll", []string{"we", "'ve", "they", "'re", "i", "'d", "you", "'ll"}},
		{"flat", "DON'T", []string{"do", "n't"}},
		{"flat", "can't won't", []string{"ca", "n't", "wo", "n't"}},
		{"flat", "I'd've", []string{"i", "'d", "'ve"}},
		{"flat", "o'reilly", []string{"o", "'reilly"}}, // the reference regex is not anchored
		{"flat", "dogs' ``tails''", []string{"dogs'", "``tails''"}},
		{"flat", "1,000.50 $5", []string{"1", "000", "50", "5"}},
		{"flat", "co-writer/director", []string{"co", "writer", "director"}},
		{"flat", "crème brûlée", []string{"cr", "me", "br", "l", "e"}},
		{"flat", "a<br />b", []string{"a", "br", "b"}},
		{"flat", "moore 's pasteurized", []string{"moore", "'s", "pasteurized"}},
		{"flat", "does n't", []string{"does", "n't"}},
		{"flat", "'s n't", []string{"'s", "n't"}},
		{"flat", "it\u2019s", []string{"it", "s"}}, // ’ is not in [A-Za-z0-9'`]
		{"flat", "\xff\xfeabc\x80", []string{"abc"}},

		// ftml: Treebank-like, single punctuation dropped.
		{"ftml", "", nil},
		{"ftml", "Hello, World!", []string{"hello", "world"}},
		{"ftml", "Don't stop.", []string{"do", "n't", "stop"}},
		{"ftml", "it's 1,000 times", []string{"it", "'s", "1,000", "times"}},
		{"ftml", "at 3:30 or a:b", []string{"at", "3:30", "or", "a", "b"}},
		{"ftml", "great.<br /><br />The end", []string{"great", "the", "end"}},
		{"ftml", "a<br>b<BR/>c<br  />d", []string{"a", "b", "c", "d"}},
		{"ftml", "<br />", nil},
		{"ftml", "<brother>", []string{"brother"}},
		{"ftml", "wait... what -- no", []string{"wait", "...", "what", "--", "no"}},
		{"ftml", "\"quoted\" (paren) [b] {c} <d>", []string{"quoted", "paren", "b", "c", "d"}},
		{"ftml", "'hello' dogs' tails", []string{"hello", "dogs", "tails"}},
		{"ftml", "u.s. mr. e.g. end.", []string{"u.s.", "mr", "e.g.", "end"}},
		{"ftml", "I'd've I'm we'll", []string{"i", "'d", "'ve", "i", "'m", "we", "'ll"}},
		{"ftml", "can't won't cannot gonna Gotta", []string{"ca", "n't", "wo", "n't", "can", "not", "gon", "na", "got", "ta"}},
		{"ftml", "moore 's does n't", []string{"moore", "'s", "does", "n't"}},
		{"ftml", "don\u2019t \u201cquoted\u201d", []string{"do", "n't", "quoted"}},
		{"ftml", "e-mail co-writer/director", []string{"e-mail", "co-writer/director"}},
		{"ftml", "$5 50% a&b #1 @me", []string{"5", "50", "a", "b", "1", "me"}},
		{"ftml", "wow!!! really?!", []string{"wow", "really"}},
		{"ftml", "he said 'stop.'", []string{"he", "said", "stop"}},
		{"ftml", "a - b , c", []string{"a", "b", "c"}},
		{"ftml", "ÉCOLE Straße", []string{"école", "straße"}},

		// whitespace
		{"whitespace", "", nil},
		{"whitespace", "  Hello,\tWORLD!\n", []string{"hello,", "world!"}},
		{"whitespace", "a\u00a0b\u2003c", []string{"a", "b", "c"}},
		{"whitespace", "don't", []string{"don't"}},
	}
	for _, tc := range tests {
		tk := mustTokenizer(t, tc.tok)
		toks := tk.Tokenize(tc.in)
		got := Texts(toks)
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s.Tokenize(%q) = %q, want %q", tc.tok, tc.in, got, tc.want)
		}
		checkOffsets(t, tk.Name(), tc.in, toks)
	}
}

func TestTokenOffsets(t *testing.T) {
	tests := []struct {
		tok, in string
		want    []Token
	}{
		{"flat", "Don't!", []Token{{"do", 0, 2}, {"n't", 2, 5}}},
		{"flat", "  It's ok", []Token{{"it", 2, 4}, {"'s", 4, 6}, {"ok", 7, 9}}},
		{"ftml", "Don't stop.", []Token{{"do", 0, 2}, {"n't", 2, 5}, {"stop", 6, 10}}},
		{"ftml", "x.<br />It\u2019s", []Token{{"x", 0, 1}, {"it", 8, 10}, {"'s", 10, 14}}},
		{"ftml", "cannot", []Token{{"can", 0, 3}, {"not", 3, 6}}},
		{"whitespace", "é  B", []Token{{"é", 0, 2}, {"b", 4, 5}}},
	}
	for _, tc := range tests {
		got := mustTokenizer(t, tc.tok).Tokenize(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s.Tokenize(%q) = %v, want %v", tc.tok, tc.in, got, tc.want)
		}
	}
}

// checkOffsets asserts the invariants every tokenizer promises: spans inside
// the string, in order, not overlapping, and Text = normalised source.
func checkOffsets(t testing.TB, name, s string, toks []Token) {
	t.Helper()
	prev := 0
	for i, tk := range toks {
		if tk.Start < prev || tk.End <= tk.Start || tk.End > len(s) {
			t.Fatalf("%s(%q): token %d %v: bad span (prev end %d, len %d)", name, s, i, tk, prev, len(s))
		}
		prev = tk.End
		src := s[tk.Start:tk.End]
		want := strings.ToLower(src)
		if name == "ftml" {
			want = strings.ReplaceAll(want, "\u2019", "'")
		}
		if tk.Text != want {
			t.Fatalf("%s(%q): token %d Text %q, source %q (want %q)", name, s, i, tk.Text, src, want)
		}
		if tk.Text == "" {
			t.Fatalf("%s(%q): empty token %d", name, s, i)
		}
		if name == "ftml" && isSinglePunct(src) {
			t.Fatalf("%s(%q): single punctuation token %q kept", name, s, src)
		}
		if name == "flat" {
			for j := 0; j < len(src); j++ {
				if !flatWordByte(src[j]) {
					t.Fatalf("flat(%q): token %q has byte %q", s, src, src[j])
				}
			}
		}
		if name == "whitespace" && strings.ContainsFunc(src, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }) {
			t.Fatalf("whitespace(%q): token %q has a space", s, src)
		}
	}
}

var fuzzSeeds = []string{
	"", "Don't stop, it's 1,000 times better.<br /><br />The END... I'd've gone -- \"really\" (yes)!",
	"dogs' 'hello' u.s. mr. can't cannot", "rock \u2019n\u2019 roll don\u2019t \u201cq\u201d",
	"\xff\xfe\x80'", "'''", "...", "--", "<br", "<br /", "a<br/ >b", "n't", "'s's's", "İSTANBUL K\u212a",
	"\u2019\u2019\u2019s", "\u2019s\u2019", ".'.'.", ",:,:1", "a\u0085b",
}

func FuzzTokenize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"flat", "ftml", "whitespace"} {
			tk := mustTokenizer(t, name)
			toks := tk.Tokenize(s)
			checkOffsets(t, name, s, toks)
			// Detokenize with no replacement, or with every token replaced by
			// its own source, gives back the input.
			rep := map[int]string{}
			for i, x := range toks {
				rep[i] = s[x.Start:x.End]
			}
			if got := Detokenize(s, toks, rep); got != s {
				t.Fatalf("%s: identity Detokenize(%q) = %q", name, s, got)
			}
		}
	})
}

func TestNewTokenizer(t *testing.T) {
	for _, name := range []string{"flat", "ftml", "whitespace"} {
		tk, err := NewTokenizer(name)
		if err != nil || tk.Name() != name {
			t.Errorf("NewTokenizer(%q) = %v, %v", name, tk, err)
		}
	}
	_, err := NewTokenizer("nltk")
	if err == nil {
		t.Fatal("unknown tokenizer: no error")
	}
	for _, name := range []string{"flat", "ftml", "whitespace", "nltk"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not mention %q", err, name)
		}
	}
}

type upper struct{}

func (upper) Tokenize(s string) []Token { return []Token{{strings.ToUpper(s), 0, len(s)}} }
func (upper) Name() string              { return "test-upper" }

func TestRegister(t *testing.T) {
	// The registry is global: remove the test entry so -count=N reruns work.
	t.Cleanup(func() {
		registryMu.Lock()
		delete(registry, "test-upper")
		registryMu.Unlock()
	})
	if err := Register("test-upper", func() Tokenizer { return upper{} }); err != nil {
		t.Fatal(err)
	}
	if err := Register("test-upper", func() Tokenizer { return upper{} }); err == nil {
		t.Error("duplicate Register: no error")
	}
	if err := Register("", nil); err == nil {
		t.Error("empty Register: no error")
	}
	tk, err := NewTokenizer("test-upper")
	if err != nil || tk.Tokenize("ab")[0].Text != "AB" {
		t.Fatalf("registered tokenizer: %v %v", tk, err)
	}
}

func TestDetokenize(t *testing.T) {
	s := "Don't stop,  it's GREAT.<br />Really!"
	toks := NewFTML().Tokenize(s)
	// do n't stop it 's great really
	tests := []struct {
		name    string
		toks    []Token
		replace map[int]string
		want    string
	}{
		{"none", toks, nil, s},
		{"one word", toks, map[int]string{2: "halt"}, "Don't halt,  it's GREAT.<br />Really!"},
		{"clitic part", toks, map[int]string{1: " not"}, "Do not stop,  it's GREAT.<br />Really!"},
		{"several", toks, map[int]string{5: "awful", 3: "this", 6: "Honestly"}, "Don't stop,  this's awful.<br />Honestly!"},
		{"delete", toks, map[int]string{2: ""}, "Don't ,  it's GREAT.<br />Really!"},
		{"out of range ignored", toks, map[int]string{-1: "x", 99: "y"}, s},
		{"bad span ignored", []Token{{"x", 5, 100}}, map[int]string{0: "z"}, s},
		{"overlap ignored", []Token{{"a", 0, 5}, {"b", 3, 8}}, map[int]string{0: "A", 1: "B"}, "A stop,  it's GREAT.<br />Really!"},
		{"unsorted tokens", []Token{{"b", 6, 10}, {"a", 0, 5}}, map[int]string{0: "go", 1: "Do"}, "Do go,  it's GREAT.<br />Really!"},
	}
	for _, tc := range tests {
		if got := Detokenize(s, tc.toks, tc.replace); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Texts(toks); !reflect.DeepEqual(got, []string{"do", "n't", "stop", "it", "'s", "great", "really"}) {
		t.Fatalf("tokens %q", got)
	}
	if !utf8.ValidString(Detokenize("é x", NewWhitespace().Tokenize("é x"), map[int]string{1: "ü"})) {
		t.Error("invalid UTF-8")
	}
}

func BenchmarkTokenize(b *testing.B) {
	s := strings.Repeat("This movie wasn't great, but it's 1,000 times better than the sequel.<br /><br />", 20)
	for _, name := range []string{"flat", "ftml", "whitespace"} {
		tk := mustTokenizer(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for i := 0; i < b.N; i++ {
				tk.Tokenize(s)
			}
		})
	}
}
