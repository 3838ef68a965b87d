package text

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/realdata"
)

// miniLMDir returns the all-MiniLM-L6-v2 folder of shared/data (beside the
// repository root: ../../shared/data from this package, /work/shared/data for
// /work/main; or $TEXTARMOR_DATA), or skips with the reason.
func miniLMDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(realdata.Dir(t), "models", "all-MiniLM-L6-v2")
	if _, err := os.Stat(filepath.Join(dir, "reference-outputs.json")); err != nil {
		t.Skipf("reference tokenizer data missing: %v", err)
	}
	return dir
}

type wpReference struct {
	Text     string   `json:"text"`
	InputIDs []int32  `json:"input_ids"`
	Tokens   []string `json:"tokens"`
}

func loadWPReference(t *testing.T, dir string) []wpReference {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "reference-outputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		ProducedWith string        `json:"produced_with"`
		Tokenization []wpReference `json:"tokenization"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Tokenization) == 0 {
		t.Fatal("reference-outputs.json has no tokenization cases")
	}
	t.Logf("%d reference cases from %s", len(ref.Tokenization), ref.ProducedWith)
	return ref.Tokenization
}

// checkWPReference encodes every reference text and compares ids (and the
// token strings) with the Hugging Face fast tokenizer's.
func checkWPReference(t *testing.T, wp *WordPiece, cases []wpReference) {
	t.Helper()
	bad := 0
	for _, c := range cases {
		enc := wp.Encode(c.Text, 0)
		if reflect.DeepEqual(enc.IDs, c.InputIDs) {
			toks := make([]string, len(enc.Pieces))
			for i, p := range enc.Pieces {
				toks[i] = p.Text
			}
			if !reflect.DeepEqual(toks, c.Tokens) {
				t.Errorf("text %q: tokens %q, want %q", c.Text, toks, c.Tokens)
			}
			checkPieceSpans(t, c.Text, enc.Pieces)
			continue
		}
		bad++
		if bad <= 10 {
			got := make([]string, len(enc.IDs))
			for i, id := range enc.IDs {
				got[i] = wp.Token(id)
			}
			t.Errorf("text %q:\n want %v %q\n got  %v %q", c.Text, c.InputIDs, c.Tokens, enc.IDs, got)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d reference texts differ", bad, len(cases))
	} else {
		t.Logf("all %d reference texts match", len(cases))
	}
}

// checkPieceSpans checks that every non-special piece spans whole characters
// of s, that spans never go backwards and that specials have -1, -1.
func checkPieceSpans(t *testing.T, s string, pieces []Piece) {
	t.Helper()
	prevStart := 0
	for i, p := range pieces {
		if p.Word < 0 {
			if p.Start != -1 || p.End != -1 {
				t.Fatalf("%q: special piece %d %+v has a span", s, i, p)
			}
			continue
		}
		if p.Start < prevStart || p.End <= p.Start || p.End > len(s) {
			t.Fatalf("%q: piece %d %+v: bad span (previous start %d, len %d)", s, i, p, prevStart, len(s))
		}
		if !validBoundary(s, p.Start) || !validBoundary(s, p.End) {
			t.Fatalf("%q: piece %d %+v does not span whole characters", s, i, p)
		}
		prevStart = p.Start
	}
}

func validBoundary(s string, i int) bool {
	return i == len(s) || i == 0 || s[i]&0xC0 != 0x80
}

func TestWordPieceReference(t *testing.T) {
	dir := miniLMDir(t)
	cases := loadWPReference(t, dir)
	wp, err := LoadWordPiece(dir)
	if err != nil {
		t.Fatal(err)
	}
	if wp.Size() != 30522 || wp.CLSID() != 101 || wp.SEPID() != 102 || wp.PadID() != 0 || wp.UnkID() != 100 || wp.MaskID() != 103 {
		t.Fatalf("size %d, special ids CLS %d SEP %d PAD %d UNK %d MASK %d", wp.Size(), wp.CLSID(), wp.SEPID(), wp.PadID(), wp.UnkID(), wp.MaskID())
	}
	if o := wp.Options(); !o.Lowercase || o.StripAccents != nil || !o.ChineseChars || o.ModelMaxLength != 512 || o.MaxWordChars != 100 {
		t.Fatalf("options from tokenizer_config.json: %+v", o)
	}
	checkWPReference(t, wp, cases)
}

// TestWordPieceReferenceTokenizerJSON loads the tokenizer from tokenizer.json
// (no vocab.txt) and checks the same ids.
func TestWordPieceReferenceTokenizerJSON(t *testing.T) {
	dir := miniLMDir(t)
	cases := loadWPReference(t, dir)
	for _, files := range [][]string{
		{"tokenizer.json", "tokenizer_config.json"},
		{"tokenizer.json"},
	} {
		tmp := t.TempDir()
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		wp, err := LoadWordPiece(tmp)
		if err != nil {
			t.Fatalf("%v: %v", files, err)
		}
		full, err := LoadWordPiece(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(wp.Vocab(), full.Vocab()) {
			t.Fatalf("%v: vocabulary differs from vocab.txt", files)
		}
		t.Run(strings.Join(files, "+"), func(t *testing.T) { checkWPReference(t, wp, cases) })
	}
}

// TestWordPieceReferenceSpans checks byte spans and word indexes against
// those of the Hugging Face fast tokenizer (tokenizers 0.23.3, offsets
// converted to bytes) on hard cases: accents, combining marks, CJK, Hangul
// jamo, the dotted capital I, control characters, special tokens in the text,
// and NFD reordering of combining marks (whose spans HF assigns position by
// position, not character by character).
func TestWordPieceReferenceSpans(t *testing.T) {
	wp, err := LoadWordPiece(miniLMDir(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in    string
		ids   []int32
		spans [][3]int // start, end, word
	}{
		{"\u00c9l\u00e8ve, CAFE\u0301!", []int32{3449, 18697, 1010, 7668, 999},
			[][3]int{{0, 3, 0}, {3, 7, 0}, {7, 8, 1}, {9, 13, 2}, {15, 16, 3}}},
		{"na\u00efve caf\u00e9 \u4e2d\u6587\u5b57\u7b26 \ud55c\uad6d\uc5b4", []int32{15743, 7668, 1746, 1861, 100, 100, 1469, 30006, 30021, 29991, 30014, 30020, 29999, 30008},
			[][3]int{{0, 6, 0}, {7, 12, 1}, {13, 16, 2}, {16, 19, 3}, {19, 22, 4}, {22, 25, 5}, {26, 29, 6}, {26, 29, 6}, {26, 29, 6}, {29, 32, 6}, {29, 32, 6}, {29, 32, 6}, {32, 35, 6}, {32, 35, 6}}},
		{"\u0130stanbul \u00c5NGSTR\u00d6M", []int32{9960, 17076, 15687}, [][3]int{{0, 9, 0}, {10, 14, 1}, {14, 20, 1}}},
		{"\x00ctrl\x07chars\x1b[31m", []int32{14931, 12190, 7507, 2869, 1031, 2861, 2213},
			[][3]int{{1, 3, 0}, {3, 5, 0}, {6, 9, 0}, {9, 11, 0}, {12, 13, 1}, {13, 15, 2}, {15, 16, 2}}},
		{"a [MASK] b[SEP]", []int32{1037, 103, 1038, 102}, [][3]int{{0, 1, 0}, {2, 8, 1}, {9, 10, 2}, {10, 15, 3}}},
		{"\u0e31\u212b\u0301\u0316\u200b\u0345\u1b44\u0301\u201c", []int32{100, 1523}, [][3]int{{3, 8, 0}, {20, 23, 1}}},
		{"x\u0300\u0301\U0001D165y ok", []int32{100, 7929}, [][3]int{{0, 10, 0}, {11, 13, 1}}},
		{"emoji \U0001F600\U0001F44D\U0001F3FD here", []int32{7861, 29147, 2072, 100, 2182}, [][3]int{{0, 2, 0}, {2, 4, 0}, {4, 5, 0}, {6, 18, 1}, {19, 23, 2}}},
		{"zero\u200bwidth  tab\there", []int32{5717, 9148, 11927, 2232, 21628, 2182}, [][3]int{{0, 4, 0}, {7, 9, 0}, {9, 11, 0}, {11, 12, 0}, {14, 17, 1}, {18, 22, 2}}},
	}
	for _, tc := range tests {
		ps := wp.Tokenize(tc.in)
		ids := make([]int32, len(ps))
		spans := make([][3]int, len(ps))
		for i, p := range ps {
			ids[i] = p.ID
			spans[i] = [3]int{p.Start, p.End, p.Word}
		}
		if !reflect.DeepEqual(ids, tc.ids) || !reflect.DeepEqual(spans, tc.spans) {
			t.Errorf("%+q:\n got  %v %v\n want %v %v", tc.in, ids, spans, tc.ids, tc.spans)
		}
	}
}

// BenchmarkWordPieceEncodeMiniLM encodes the reference texts with the real
// 30522-token vocabulary.
func BenchmarkWordPieceEncodeMiniLM(b *testing.B) {
	dir := miniLMDir(b)
	wp, err := LoadWordPiece(dir)
	if err != nil {
		b.Skipf("reference tokenizer missing: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "reference-outputs.json"))
	if err != nil {
		b.Skip(err)
	}
	var ref struct {
		Tokenization []wpReference `json:"tokenization"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		b.Fatal(err)
	}
	bytes := 0
	for _, c := range ref.Tokenization {
		bytes += len(c.Text)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, c := range ref.Tokenization {
			wp.Encode(c.Text, 256)
		}
	}
}
