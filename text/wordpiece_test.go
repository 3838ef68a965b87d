package text

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// testWPVocab is a small vocabulary exercising the tokenizer's rules.
var testWPVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	// greedy longest match: "unaffable" is una ##ff ##able, not un ##aff ##able
	"un", "una", "##aff", "##ff", "##able", "##a", "##ble",
	"a", "b", "c", "x", "##y", "##z",
	"hello", "world", "don", "t", "'", ",", "!", ".", "[", "]", "mask", "«", "»", "hi",
	"cafe", "café", "Café", "Cafe", "##é", "caf", "resume", "el", "##eve", "ecole",
	"中", "文", "##文", "##abc", "abc", "abcd", "ab", "##cd", "##c", "##b",
	"istanbul", "i", "##̇", "##stanbul", // "i" + U+0307 when lower-cased without stripping
	"ᄒ", "##ᅡ", "##ᆫ",
	"the", "cat", "sat", "on", "mat",
	"helloworld", "##istanbul", // the longest entries (10 bytes)
}

func newTestWP(t testing.TB, edit func(o *WordPieceOptions)) *WordPiece {
	t.Helper()
	o := DefaultWordPieceOptions()
	if edit != nil {
		edit(&o)
	}
	wp, err := NewWordPiece(testWPVocab, o)
	if err != nil {
		t.Fatal(err)
	}
	return wp
}

func pieceTexts(ps []Piece) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

func boolPtr(b bool) *bool { return &b }

func TestWordPieceTokenize(t *testing.T) {
	uncased := newTestWP(t, nil)
	cased := newTestWP(t, func(o *WordPieceOptions) { o.Lowercase = false })
	casedStrip := newTestWP(t, func(o *WordPieceOptions) { o.Lowercase = false; o.StripAccents = boolPtr(true) })
	lowerKeep := newTestWP(t, func(o *WordPieceOptions) { o.StripAccents = boolPtr(false) })
	noCJK := newTestWP(t, func(o *WordPieceOptions) { o.ChineseChars = false })
	short := newTestWP(t, func(o *WordPieceOptions) { o.MaxWordChars = 5 })
	literal := newTestWP(t, func(o *WordPieceOptions) { o.SplitSpecialTokens = true })
	tests := []struct {
		name string
		wp   *WordPiece
		in   string
		want []string
	}{
		{"greedy longest match", uncased, "unaffable", []string{"una", "##ff", "##able"}},
		{"continuation pieces", uncased, "abcd abcc", []string{"abcd", "abc", "##c"}},
		{"whole word unknown when a piece is missing", uncased, "xyq xyz", []string{"[UNK]", "x", "##y", "##z"}},
		{"100 characters are pieced", uncased, strings.Repeat("a", 100), append([]string{"a"}, strings.Split(strings.Repeat("##a ", 99), " ")[:99]...)},
		{"101 characters are unknown", uncased, strings.Repeat("a", 101) + " b", []string{"[UNK]", "b"}},
		{"MaxWordChars", short, "aaaaa aaaaaa", []string{"a", "##a", "##a", "##a", "##a", "[UNK]"}},
		{"punctuation split", uncased, "Hello,world!don't.", []string{"hello", ",", "world", "!", "don", "'", "t", "."}},
		{"unicode punctuation", uncased, "«hi»", []string{"«", "hi", "»"}},
		{"lower-case and strip accents", uncased, "CAFÉ Résumé ÉCOLE élève", []string{"cafe", "resume", "ecole", "el", "##eve"}},
		{"combining accent", uncased, "cafe\u0301", []string{"cafe"}},
		{"cased keeps case and accents", cased, "Café café Cafe", []string{"Café", "café", "Cafe"}},
		{"cased with StripAccents", casedStrip, "Café café", []string{"Cafe", "cafe"}},
		{"lower-case without stripping", lowerKeep, "CAFÉ", []string{"café"}},
		{"dotted capital I lower-cased alone", lowerKeep, "İstanbul", []string{"i", "##̇", "##stanbul"}},
		{"dotted capital I stripped", uncased, "İstanbul", []string{"istanbul"}},
		{"CJK characters are words", uncased, "中文abc", []string{"中", "文", "abc"}},
		{"CJK without splitting", noCJK, "中文abc", []string{"中", "##文", "##abc"}},
		{"Hangul decomposes to jamo", uncased, "한", []string{"ᄒ", "##ᅡ", "##ᆫ"}},
		{"control characters dropped", uncased, "a\x00b\u200bc\ufffdd \x07ab\x0bcd\u0085", []string{"abcd", "abcd"}},
		{"invalid UTF-8 dropped", uncased, "ab\xffcd", []string{"abcd"}},
		{"tab newline CR and unicode spaces split", uncased, "a\tb\nc\r\u00a0a\u3000b\u2028c", []string{"a", "b", "c", "a", "b", "c"}},
		{"empty", uncased, "", nil},
		{"only spaces", uncased, "  \t\n ", nil},
		{"special tokens kept whole", uncased, "a [MASK] b[SEP]c [mask]", []string{"a", "[MASK]", "b", "[SEP]", "c", "[", "mask", "]"}},
		{"SplitSpecialTokens", literal, "a [MASK]", []string{"a", "[", "mask", "]"}},
		{"unknown character", uncased, "a ☃ b", []string{"a", "[UNK]", "b"}},
		{"longest entries at the start", uncased, "helloworlda helloworld", []string{"helloworld", "##a", "helloworld"}},
		{"longest entries continuing", uncased, "istanbulistanbula", []string{"istanbul", "##istanbul", "##a"}},
		{"CJK extension E start is not split", uncased, "a\U0002B820b a\U0002B91Fb", []string{"[UNK]", "[UNK]"}},
		{"CJK ideograph ranges", uncased, "a\u3400b\U0002B920c\U0002F800a\uF900b\U0002A6DFa", []string{"a", "[UNK]", "b", "[UNK]", "c", "[UNK]", "a", "[UNK]", "b", "[UNK]", "a"}},
		{"unassigned code point kept", uncased, "ab\u0378", []string{"[UNK]"}},
		{"format character dropped", uncased, "ab\u00adc", []string{"abc"}},
	}
	for _, tc := range tests {
		got := pieceTexts(tc.wp.Tokenize(tc.in))
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Tokenize(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
		for _, p := range tc.wp.Tokenize(tc.in) {
			if id, ok := tc.wp.ID(p.Text); !ok || id != p.ID {
				t.Errorf("%s: piece %+v: ID(%q) = %d, %v", tc.name, p, p.Text, id, ok)
			}
		}
	}
}

type span struct {
	text       string
	start, end int
	word       int
}

func pieceSpans(s string, ps []Piece) []span {
	out := make([]span, len(ps))
	for i, p := range ps {
		out[i] = span{s[p.Start:p.End], p.Start, p.End, p.Word}
	}
	return out
}

func TestWordPieceSpecialsLongestMatch(t *testing.T) {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[MASK]-long", "-", "long", "[", "]", "mask", "x"}
	o := DefaultWordPieceOptions()
	o.NeverSplit = []string{"[MASK]", "[MASK]-long"}
	wp, err := NewWordPiece(vocab, o)
	if err != nil {
		t.Fatal(err)
	}
	got := pieceTexts(wp.Tokenize("x[MASK]-longx[MASK]-x"))
	if want := []string{"x", "[MASK]-long", "x", "[MASK]", "-", "x"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Tokenize = %q, want %q", got, want)
	}
}

func TestWordPieceSpans(t *testing.T) {
	uncased := newTestWP(t, nil)
	tests := []struct {
		in   string
		want []span
	}{
		// Lower-cased and accented: "É" is two bytes, "e" + U+0301 three.
		{"Élève, CAFE\u0301!", []span{{"Él", 0, 3, 0}, {"ève", 3, 7, 0}, {",", 7, 8, 1}, {"CAFE", 9, 13, 2}, {"!", 15, 16, 3}}},
		// CJK characters are words of their own.
		{" 中文abc", []span{{"中", 1, 4, 0}, {"文", 4, 7, 1}, {"abc", 7, 10, 2}}},
		// Jamo pieces all point at their syllable.
		{"x 한", []span{{"x", 0, 1, 0}, {"한", 2, 5, 1}, {"한", 2, 5, 1}, {"한", 2, 5, 1}}},
		// Dropped characters inside a piece are covered; at its edges not.
		{"\x00ab\u200bc\x00d\x00", []span{{"ab\u200bc\x00d", 1, 9, 0}}},
		// Unknown words cover the whole word.
		{"xyq  ☃", []span{{"xyq", 0, 3, 0}, {"☃", 5, 8, 1}}},
		// Special tokens in the text.
		{"a[MASK]b", []span{{"a", 0, 1, 0}, {"[MASK]", 1, 7, 1}, {"b", 7, 8, 2}}},
	}
	for _, tc := range tests {
		got := pieceSpans(tc.in, uncased.Tokenize(tc.in))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Tokenize(%q) spans\n got  %+v\n want %+v", tc.in, got, tc.want)
		}
	}
}

func TestWordPieceEncode(t *testing.T) {
	wp := newTestWP(t, nil)
	enc := wp.Encode("the cat sat", 0)
	want := []int32{wp.CLSID(), mustID(t, wp, "the"), mustID(t, wp, "cat"), mustID(t, wp, "sat"), wp.SEPID()}
	if !reflect.DeepEqual(enc.IDs, want) || !reflect.DeepEqual(enc.TypeIDs, make([]int32, 5)) || enc.Truncated != 0 {
		t.Fatalf("Encode: %+v, want ids %v", enc, want)
	}
	for _, i := range []int{0, 4} {
		if p := enc.Pieces[i]; p.Start != -1 || p.End != -1 || p.Word != -1 {
			t.Errorf("special piece %d: %+v", i, p)
		}
	}
	if len(enc.Pieces) != len(enc.IDs) {
		t.Fatalf("%d pieces for %d ids", len(enc.Pieces), len(enc.IDs))
	}
	for maxLen, wantN := range map[int]int{1: 2, 2: 2, 3: 3, 4: 4, 5: 5, 6: 5, 0: 5, -1: 5} {
		enc := wp.Encode("the cat sat", maxLen)
		if len(enc.IDs) != wantN || enc.Truncated != 5-wantN || enc.IDs[0] != wp.CLSID() || enc.IDs[len(enc.IDs)-1] != wp.SEPID() {
			t.Errorf("maxLen %d: %v (truncated %d)", maxLen, enc.IDs, enc.Truncated)
		}
		if !reflect.DeepEqual(enc.IDs[1:len(enc.IDs)-1], want[1:wantN-1]) {
			t.Errorf("maxLen %d: kept %v, want the first pieces %v", maxLen, enc.IDs, want[1:wantN-1])
		}
	}
	empty := wp.Encode("", 8)
	if !reflect.DeepEqual(empty.IDs, []int32{wp.CLSID(), wp.SEPID()}) {
		t.Errorf("Encode(\"\") = %v", empty.IDs)
	}
}

func mustID(t testing.TB, wp *WordPiece, tok string) int32 {
	t.Helper()
	id, ok := wp.ID(tok)
	if !ok {
		t.Fatalf("%q not in vocabulary", tok)
	}
	return id
}

func TestWordPieceEncodePair(t *testing.T) {
	wp := newTestWP(t, nil)
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("a ", n)) }
	tests := []struct {
		na, nb, maxLen int
		ka, kb         int // pieces kept
	}{
		{3, 2, 0, 3, 2},
		{3, 2, 8, 3, 2},   // fits exactly
		{6, 2, 8, 3, 2},   // only the longer is cut
		{2, 6, 8, 2, 3},   // same, b longer
		{6, 6, 8, 2, 3},   // both cut: 5 = 2 + 3, the odd one to b
		{7, 6, 8, 3, 2},   // both cut, a longer: the odd one to a
		{6, 7, 9, 3, 3},   // even budget
		{1, 9, 9, 1, 5},   // shorter kept whole
		{4, 9, 9, 3, 3},   // shorter longer than half
		{5, 5, 3, 0, 0},   // no room
		{5, 5, 2, 0, 0},   // below the specials
		{0, 0, 10, 0, 0},  // empty texts
		{0, 12, 10, 0, 7}, // empty first text
	}
	for _, tc := range tests {
		a, b := words(tc.na), words(tc.nb)
		enc := wp.EncodePair(a, b, tc.maxLen)
		id := mustID(t, wp, "a")
		var wantIDs, wantTypes []int32
		wantIDs = append(wantIDs, wp.CLSID())
		for i := 0; i < tc.ka; i++ {
			wantIDs = append(wantIDs, id)
		}
		wantIDs = append(wantIDs, wp.SEPID())
		for range wantIDs {
			wantTypes = append(wantTypes, 0)
		}
		for i := 0; i < tc.kb; i++ {
			wantIDs = append(wantIDs, id)
			wantTypes = append(wantTypes, 1)
		}
		wantIDs = append(wantIDs, wp.SEPID())
		wantTypes = append(wantTypes, 1)
		if !reflect.DeepEqual(enc.IDs, wantIDs) || !reflect.DeepEqual(enc.TypeIDs, wantTypes) {
			t.Errorf("EncodePair(%d, %d pieces, maxLen %d):\n ids   %v types %v\n want  %v types %v", tc.na, tc.nb, tc.maxLen, enc.IDs, enc.TypeIDs, wantIDs, wantTypes)
		}
		if enc.Truncated != tc.na+tc.nb-tc.ka-tc.kb {
			t.Errorf("EncodePair(%d, %d, %d): Truncated %d", tc.na, tc.nb, tc.maxLen, enc.Truncated)
		}
		// Spans of b point into b, words counted from 0 in each sequence.
		for i, p := range enc.Pieces {
			if p.ID == id && (p.Start != 2*p.Word || p.End != 2*p.Word+1) {
				t.Errorf("EncodePair: piece %d %+v: span not in its own text", i, p)
			}
		}
	}
}

func TestLongestFirst(t *testing.T) {
	// Cross-check the closed form with the description: the shorter keeps its
	// length when it fits in half, else both get half (odd one to the longer,
	// or to the second when equal).
	for n1 := 0; n1 < 12; n1++ {
		for n2 := 0; n2 < 12; n2++ {
			for m := 0; m < 14; m++ {
				k1, k2 := longestFirst(n1, n2, m)
				var w1, w2 int
				switch {
				case n1+n2 <= m:
					w1, w2 = n1, n2
				case min(n1, n2) <= m/2:
					if n1 <= n2 {
						w1, w2 = n1, m-n1
					} else {
						w1, w2 = m-n2, n2
					}
				default:
					w1, w2 = m/2, m/2
					if m%2 == 1 {
						if n1 > n2 {
							w1++
						} else {
							w2++
						}
					}
				}
				if k1 != w1 || k2 != w2 {
					t.Fatalf("longestFirst(%d, %d, %d) = %d, %d, want %d, %d", n1, n2, m, k1, k2, w1, w2)
				}
			}
		}
	}
}

func TestWordPieceEncodeWords(t *testing.T) {
	wp := newTestWP(t, nil)
	words := []string{"The", "cat", "don't", "", "中文", "sat", "[MASK]", "\x00", "unaffable"}
	enc, ranges := wp.EncodeWords(words, 0)
	join := wp.Encode(strings.Join(words, " "), 0)
	if !reflect.DeepEqual(enc, join) {
		t.Fatalf("EncodeWords differs from Encode(join):\n %+v\n %+v", enc, join)
	}
	wantRanges := [][2]int{{1, 2}, {2, 3}, {3, 6}, {6, 6}, {6, 8}, {8, 9}, {9, 10}, {10, 10}, {10, 13}}
	if !reflect.DeepEqual(ranges, wantRanges) {
		t.Fatalf("ranges %v, want %v", ranges, wantRanges)
	}
	for i, r := range ranges {
		got := pieceTexts(enc.Pieces[r[0]:r[1]])
		want := pieceTexts(wp.Tokenize(words[i]))
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("word %q: pieces %q, want %q", words[i], got, want)
		}
	}
	// Truncated: 6 pieces kept of 12.
	enc, ranges = wp.EncodeWords(words, 8)
	wantRanges = [][2]int{{1, 2}, {2, 3}, {3, 6}, {6, 6}, {6, 7}, {7, 7}, {7, 7}, {7, 7}, {7, 7}}
	if !reflect.DeepEqual(ranges, wantRanges) || len(enc.IDs) != 8 || enc.Truncated != 6 {
		t.Fatalf("truncated: ids %v (truncated %d), ranges %v, want %v", enc.IDs, enc.Truncated, ranges, wantRanges)
	}
	if !reflect.DeepEqual(enc, wp.Encode(strings.Join(words, " "), 8)) {
		t.Fatal("truncated EncodeWords differs from Encode(join)")
	}
}

// TestWordPieceEncodeWordsRandom checks EncodeWords against Encode of the
// joined words on random words built from awkward characters.
func TestWordPieceEncodeWordsRandom(t *testing.T) {
	wp := newTestWP(t, nil)
	pool := []string{"a", "A", "b", "c", "x", "y", "'", ",", "!", "[MASK]", "[SEP", "é", "\u0301", "\u0316", "\u0f73",
		"\U0001D165", "\u1b44", "中", "한", "\x00", "\u200b", "İ", "ß", "\U0001F600", "«"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		words := make([]string, rng.Intn(8))
		for j := range words {
			var sb strings.Builder
			for k := rng.Intn(5); k >= 0; k-- {
				sb.WriteString(pool[rng.Intn(len(pool))])
			}
			words[j] = sb.String()
		}
		maxLen := rng.Intn(12)
		enc, ranges := wp.EncodeWords(words, maxLen)
		join := wp.Encode(strings.Join(words, " "), maxLen)
		if !reflect.DeepEqual(enc, join) {
			t.Fatalf("%q (maxLen %d):\n EncodeWords %+v\n Encode      %+v", words, maxLen, enc, join)
		}
		prev := 1
		for j, r := range ranges {
			if r[0] != prev || r[1] < r[0] || r[1] > len(enc.IDs)-1 {
				t.Fatalf("%q: range %d %v after %d", words, j, r, prev)
			}
			prev = r[1]
		}
		if prev != len(enc.IDs)-1 {
			t.Fatalf("%q: ranges end at %d, ids %d", words, prev, len(enc.IDs))
		}
	}
}

func TestWordPieceVocabAccessors(t *testing.T) {
	wp := newTestWP(t, nil)
	if wp.Size() != len(testWPVocab) || !reflect.DeepEqual(wp.Vocab(), testWPVocab) {
		t.Fatal("Size/Vocab")
	}
	v := wp.Vocab()
	v[0] = "changed"
	if wp.Token(0) != "[PAD]" {
		t.Fatal("Vocab returned the internal slice")
	}
	ids := map[string]int32{"[PAD]": wp.PadID(), "[UNK]": wp.UnkID(), "[CLS]": wp.CLSID(), "[SEP]": wp.SEPID(), "[MASK]": wp.MaskID()}
	for tok, id := range ids {
		if wp.Token(id) != tok || id != int32(indexOf(testWPVocab, tok)) {
			t.Errorf("%s: id %d", tok, id)
		}
	}
	if _, ok := wp.ID("nope"); ok {
		t.Error("ID of unknown token")
	}
	if wp.Token(-1) != "[UNK]" || wp.Token(int32(wp.Size())) != "[UNK]" {
		t.Error("Token out of range")
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestNewWordPieceErrors(t *testing.T) {
	tests := []struct {
		name  string
		vocab []string
		edit  func(o *WordPieceOptions)
		want  string
	}{
		{"duplicate", []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "a"}, nil, `"a" appears twice (ids 5 and 6)`},
		{"empty token", []string{"[PAD]", "[UNK]", "", "[CLS]", "[SEP]", "[MASK]"}, nil, "token 2 is empty"},
		{"no mask", []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]"}, nil, `mask (Mask) token "[MASK]"`},
		{"no unk", []string{"[PAD]", "[CLS]", "[SEP]", "[MASK]"}, nil, `unknown (Unk) token "[UNK]"`},
		{"custom CLS missing", testWPVocab, func(o *WordPieceOptions) { o.CLS = "<s>" }, `classifier (CLS) token "<s>"`},
		{"NeverSplit missing", testWPVocab, func(o *WordPieceOptions) { o.NeverSplit = []string{"<x>"} }, `NeverSplit token "<x>"`},
		{"empty vocab", nil, nil, "empty"},
	}
	for _, tc := range tests {
		o := DefaultWordPieceOptions()
		if tc.edit != nil {
			tc.edit(&o)
		}
		_, err := NewWordPiece(tc.vocab, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %s", tc.name, err, tc.want)
		}
	}
}

func TestWordPieceOptionsDefaults(t *testing.T) {
	// Empty names and 0 take the defaults; the zero value is cased.
	wp, err := NewWordPiece(testWPVocab, WordPieceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := wp.Options()
	if o.Lowercase || o.Unk != "[UNK]" || o.Mask != "[MASK]" || o.MaxWordChars != 100 || o.ContinuingPrefix != "##" {
		t.Fatalf("options %+v", o)
	}
	if got := pieceTexts(wp.Tokenize("Café")); !reflect.DeepEqual(got, []string{"Café"}) {
		t.Fatalf("zero options Tokenize(Café) = %q", got)
	}
	// A custom prefix.
	wp, err = NewWordPiece([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ab", "@@cd"}, WordPieceOptions{ContinuingPrefix: "@@"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pieceTexts(wp.Tokenize("abcd")); !reflect.DeepEqual(got, []string{"ab", "@@cd"}) {
		t.Fatalf("custom prefix: %q", got)
	}
}

func TestWordPieceOptionsJSON(t *testing.T) {
	wp := newTestWP(t, func(o *WordPieceOptions) { o.StripAccents = boolPtr(false); o.ModelMaxLength = 64 })
	data, err := json.Marshal(wp.Options())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"strip_accents":false`) || !strings.Contains(string(data), `"model_max_length":64`) {
		t.Fatalf("JSON %s", data)
	}
	var o WordPieceOptions
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	wp2, err := NewWordPiece(wp.Vocab(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wp2.Options(), wp.Options()) {
		t.Fatalf("round trip: %+v, want %+v", wp2.Options(), wp.Options())
	}
	if got := pieceTexts(wp2.Tokenize("CAFÉ")); !reflect.DeepEqual(got, []string{"café"}) {
		t.Fatalf("Tokenize after round trip = %q", got)
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tokenizerJSON builds a minimal tokenizer.json for vocab.
func tokenizerJSON(vocab []string, lowercase bool) string {
	var entries []string
	for i, tok := range vocab {
		entries = append(entries, fmt.Sprintf("%q: %d", tok, i))
	}
	return fmt.Sprintf(`{"version": "1.0",
 "added_tokens": [{"id": 4, "content": "[MASK]", "special": true, "normalized": false}],
 "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": %v},
 "pre_tokenizer": {"type": "BertPreTokenizer"},
 "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
 "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": {%s}}}`,
		lowercase, strings.Join(entries, ", "))
}

func TestLoadWordPiece(t *testing.T) {
	vocabTxt := strings.Join(testWPVocab, "\n") + "\n"
	t.Run("vocab.txt only", func(t *testing.T) {
		wp, err := LoadWordPiece(writeFiles(t, map[string]string{"vocab.txt": vocabTxt}))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(wp.Vocab(), testWPVocab) || !wp.Options().Lowercase {
			t.Fatalf("vocab or defaults wrong: %+v", wp.Options())
		}
	})
	t.Run("CRLF vocab.txt", func(t *testing.T) {
		wp, err := LoadWordPiece(writeFiles(t, map[string]string{"vocab.txt": strings.ReplaceAll(vocabTxt, "\n", "\r\n")}))
		if err != nil || !reflect.DeepEqual(wp.Vocab(), testWPVocab) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("tokenizer_config.json", func(t *testing.T) {
		wp, err := LoadWordPiece(writeFiles(t, map[string]string{
			"vocab.txt": vocabTxt,
			"tokenizer_config.json": `{"do_lower_case": false, "strip_accents": true, "tokenize_chinese_chars": false,
				"mask_token": {"content": "[MASK]", "lstrip": false}, "model_max_length": 1000000000000000019884624838656}`,
		}))
		if err != nil {
			t.Fatal(err)
		}
		o := wp.Options()
		if o.Lowercase || o.StripAccents == nil || !*o.StripAccents || o.ChineseChars || o.ModelMaxLength != 0 {
			t.Fatalf("options %+v", o)
		}
		if got := pieceTexts(wp.Tokenize("Café 中文")); !reflect.DeepEqual(got, []string{"Cafe", "中", "##文"}) {
			t.Fatalf("Tokenize = %q", got)
		}
	})
	t.Run("tokenizer.json only", func(t *testing.T) {
		wp, err := LoadWordPiece(writeFiles(t, map[string]string{"tokenizer.json": tokenizerJSON(testWPVocab, false)}))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(wp.Vocab(), testWPVocab) || wp.Options().Lowercase {
			t.Fatalf("options %+v", wp.Options())
		}
	})
	t.Run("config overrides tokenizer.json", func(t *testing.T) {
		wp, err := LoadWordPiece(writeFiles(t, map[string]string{
			"tokenizer.json":        tokenizerJSON(testWPVocab, false),
			"tokenizer_config.json": `{"model_max_length": 512}`,
		}))
		if err != nil {
			t.Fatal(err)
		}
		if o := wp.Options(); !o.Lowercase || o.ModelMaxLength != 512 {
			t.Fatalf("options %+v", o)
		}
	})
	t.Run("added tokens beyond the vocab", func(t *testing.T) {
		wp, err := LoadWordPiece(writeFiles(t, map[string]string{
			"vocab.txt":             vocabTxt,
			"tokenizer_config.json": fmt.Sprintf(`{"added_tokens_decoder": {"%d": {"content": "<new>", "special": true, "normalized": false}}}`, len(testWPVocab)),
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := pieceTexts(wp.Tokenize("a<new>b")); wp.Size() != len(testWPVocab)+1 || !reflect.DeepEqual(got, []string{"a", "<new>", "b"}) {
			t.Fatalf("size %d, Tokenize = %q", wp.Size(), got)
		}
	})

	errorCases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"no files", map[string]string{"README": "x"}, []string{"neither vocab.txt nor tokenizer.json"}},
		{"duplicate line", map[string]string{"vocab.txt": "[PAD]\n[UNK]\na\nb\na\n"}, []string{"vocab.txt line 5", `"a" already on line 3`}},
		{"empty line", map[string]string{"vocab.txt": "[PAD]\n\na\n"}, []string{"vocab.txt line 2", "empty"}},
		{"missing special", map[string]string{"vocab.txt": "[PAD]\n[UNK]\n[CLS]\n[SEP]\n"}, []string{"[MASK]", "vocab.txt"}},
		{"sizes disagree", map[string]string{"vocab.txt": vocabTxt, "tokenizer.json": tokenizerJSON(testWPVocab[:len(testWPVocab)-1], true)},
			[]string{fmt.Sprintf("vocab.txt has %d tokens", len(testWPVocab)), fmt.Sprintf("tokenizer.json has %d", len(testWPVocab)-1)}},
		{"tokens disagree", map[string]string{"vocab.txt": vocabTxt, "tokenizer.json": tokenizerJSON(append(append([]string{}, testWPVocab[:len(testWPVocab)-1]...), "zzz"), true)},
			[]string{fmt.Sprintf("vocab.txt line %d", len(testWPVocab)), fmt.Sprintf("%q", testWPVocab[len(testWPVocab)-1]), `"zzz"`}},
		{"bad JSON", map[string]string{"vocab.txt": vocabTxt, "tokenizer_config.json": "{"}, []string{"tokenizer_config.json"}},
		{"bad special", map[string]string{"vocab.txt": vocabTxt, "tokenizer_config.json": `{"unk_token": 3}`}, []string{"tokenizer_config.json", "unk_token"}},
		{"not WordPiece", map[string]string{"tokenizer.json": `{"model": {"type": "BPE"}}`}, []string{"tokenizer.json", "BPE"}},
	}
	for _, tc := range errorCases {
		dir := writeFiles(t, tc.files)
		_, err := LoadWordPiece(dir)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
		if !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: error %q does not name the folder", tc.name, err)
		}
	}
}

func TestWordPieceConcurrent(t *testing.T) {
	wp := newTestWP(t, nil)
	texts := []string{"unaffable Café", "中文abc don't", "xyz xyq", strings.Repeat("a", 150), "a [MASK] b"}
	want := make([][]Piece, len(texts))
	for i, s := range texts {
		want[i] = wp.Tokenize(s)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				i := (g + k) % len(texts)
				if got := wp.Tokenize(texts[i]); !reflect.DeepEqual(got, want[i]) {
					errs <- fmt.Sprintf("%q: %v", texts[i], got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// benchWP builds a 5000-token vocabulary and 1000 texts of about 30 words
// from syllables, with capitals, accents, punctuation and unknown words.
func benchWP(b *testing.B) (*WordPiece, []string) {
	rng := rand.New(rand.NewSource(7))
	syll := []string{"ka", "to", "ri", "men", "sa", "lo", "ver", "na", "di", "que", "pre", "tion", "al", "es", "ing", "ro", "mi", "pa", "ble", "ter"}
	word := func(n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteString(syll[rng.Intn(len(syll))])
		}
		return sb.String()
	}
	seen := map[string]bool{}
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "'", "?"}
	for _, s := range syll {
		vocab = append(vocab, s, "##"+s)
		seen[s], seen["##"+s] = true, true
	}
	var common []string
	for len(vocab) < 5000 {
		w := word(1 + rng.Intn(3))
		if !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
			common = append(common, w)
		}
	}
	wp, err := NewWordPiece(vocab, DefaultWordPieceOptions())
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 1000)
	for i := range texts {
		var sb strings.Builder
		for j := 0; j < 30; j++ {
			if j > 0 {
				sb.WriteByte(' ')
			}
			switch r := rng.Intn(20); {
			case r < 14:
				sb.WriteString(common[rng.Intn(len(common))])
			case r < 16:
				sb.WriteString(word(3 + rng.Intn(3))) // pieced
			case r < 17:
				w := common[rng.Intn(len(common))]
				sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
			case r < 18:
				sb.WriteString(strings.Replace(common[rng.Intn(len(common))], "e", "é", 1))
			case r < 19:
				sb.WriteString(common[rng.Intn(len(common))] + ",")
			default:
				sb.WriteString("xqz")
			}
		}
		sb.WriteString(".")
		texts[i] = sb.String()
	}
	return wp, texts
}

func BenchmarkWordPieceEncode(b *testing.B) {
	wp, texts := benchWP(b)
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range texts {
			wp.Encode(s, 128)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

func BenchmarkWordPieceEncodeWords(b *testing.B) {
	wp, texts := benchWP(b)
	words := make([][]string, len(texts))
	for i, s := range texts {
		words[i] = strings.Fields(s)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, w := range words {
			wp.EncodeWords(w, 128)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

// Decode drops the specials and joins continuation pieces: an encoding
// decodes to its words (lower-cased, split at punctuation).
func TestWordPieceDecode(t *testing.T) {
	wp := newTestWP(t, nil)
	for in, want := range map[string]string{
		"Unaffable cat!":  "unaffable cat !",
		"the  cat sat":    "the cat sat",
		"helloworld abcd": "helloworld abcd",
		"":                "",
	} {
		if got := wp.Decode(wp.Encode(in, 0).IDs); got != want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", in, got, want)
		}
	}
	if got := wp.Decode([]int32{9, 5, 0}); got != "##able un" {
		t.Errorf("a leading continuation: %q", got)
	}
}
