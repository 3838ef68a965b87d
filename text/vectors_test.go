package text

import (
	"compress/gzip"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if strings.HasSuffix(name, ".gz") {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		if _, err := zw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func testVocab(t *testing.T, words ...string) *Vocab {
	t.Helper()
	v, err := NewVocab(append([]string{PadWord, UnkWord}, words...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLoadVectors(t *testing.T) {
	vocab := testVocab(t, "the", "cat", "apple", "new york", "missing")
	glove := "the 1 2 3\nzebra 9 9 9\nApple 4 5 6\ncat 7 8 9\napple 1.5 -2.5 3e-1\nnew york 0 1 0\n"
	tests := []struct {
		name, file, content string
		want                map[string][]float32
		dim                 int
	}{
		{"glove", "v.txt", glove, map[string][]float32{
			"the": {1, 2, 3}, "cat": {7, 8, 9}, "apple": {1.5, -2.5, 0.3}, "new york": {0, 1, 0}}, 3},
		{"fasttext header, trailing spaces, CRLF", "v.vec", "4 2 \r\nthe 1 2 \r\nCAT 3 4 \r\nCat 5 6 \r\n<pad> 9 9\r\n", map[string][]float32{
			"the": {1, 2}, "cat": {3, 4}}, 2},
		{"case variant only, first wins", "v.txt", "Apple 1\nAPPLE 2\n", map[string][]float32{"apple": {1}}, 1},
		{"exact match after variant", "v.txt", "APPLE 1\napple 2\nApple 3\n", map[string][]float32{"apple": {2}}, 1},
		{"tabs", "v.txt", "the\t1\t2\n", map[string][]float32{"the": {1, 2}}, 2},
		{"blank lines", "v.txt", "\nthe 1\n\n", map[string][]float32{"the": {1}}, 1},
		{"gzip", "v.txt.gz", glove, map[string][]float32{
			"the": {1, 2, 3}, "cat": {7, 8, 9}, "apple": {1.5, -2.5, 0.3}, "new york": {0, 1, 0}}, 3},
		{"header only", "v.vec", "0 5\n", map[string][]float32{}, 5},
		{"unk from file", "v.txt", "<unk> 1 1\n", map[string][]float32{UnkWord: {1, 1}}, 2},
		{"bad floats in unused lines are not parsed", "v.txt", "the 1 2\nzebra x y\n", map[string][]float32{"the": {1, 2}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := LoadVectors(writeFile(t, tc.file, tc.content), vocab)
			if err != nil {
				t.Fatal(err)
			}
			if vs.Dim != tc.dim || len(vs.Data) != vocab.Len()*tc.dim || len(vs.Found) != vocab.Len() {
				t.Fatalf("dim %d, data %d, found %d", vs.Dim, len(vs.Data), len(vs.Found))
			}
			n := 0
			for id := int32(0); int(id) < vocab.Len(); id++ {
				w := vocab.Word(id)
				want, ok := tc.want[w]
				if ok != vs.Found[id] {
					t.Errorf("Found[%q] = %v", w, vs.Found[id])
				}
				if !ok {
					want = make([]float32, tc.dim)
				} else {
					n++
				}
				if got := vs.Row(id); !reflect.DeepEqual(got, want) {
					t.Errorf("row %q = %v, want %v", w, got, want)
				}
			}
			if vs.NumFound != n {
				t.Errorf("NumFound %d, want %d", vs.NumFound, n)
			}
			if vs.Found[PadID] {
				t.Error("pad row taken from file")
			}
		})
	}
}

func TestLoadVectorsErrors(t *testing.T) {
	vocab := testVocab(t, "the", "cat")
	tests := []struct {
		name, content, want string
	}{
		{"too few values", "the 1 2 3\ncat 1 2\n", ":2: want 3 values after the word, got 2"},
		{"too many values", "the 1 2\ncat 1 2 3\n", ":2: want 2 values after the word, got 3"},
		{"header dim mismatch", "2 3\nthe 1 2\n", ":2: want 3 values"},
		{"unparsable float", "the 1 2\ncat 1 zz\n", ":2: value 2 of \"cat\": cannot parse \"zz\""},
		{"word only", "the\n", ":1: want a word and at least one value"},
		{"empty file", "", "no vectors"},
		{"long line", "the " + strings.Repeat("1 ", 9<<20) + "\n", ":1: line too long"},
	}
	for _, tc := range tests {
		p := writeFile(t, "bad.txt", tc.content)
		_, err := LoadVectors(p, vocab)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and containing %q", tc.name, err, p, tc.want)
		}
	}
	if _, err := LoadVectors(filepath.Join(t.TempDir(), "nope.txt"), vocab); err == nil || !strings.Contains(err.Error(), "nope.txt") {
		t.Errorf("missing file: %v", err)
	}
	notGzip := filepath.Join(t.TempDir(), "plain.gz")
	if err := os.WriteFile(notGzip, []byte("the 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadVectors(notGzip, vocab); err == nil || !strings.Contains(err.Error(), notGzip) {
		t.Errorf("bad gzip: %v", err)
	}
	if _, err := LoadVectors(writeFile(t, "v.txt", "the 1\n"), nil); err == nil {
		t.Error("nil vocab: no error")
	}
}

func TestFillMissing(t *testing.T) {
	vocab := testVocab(t, "the", "cat", "dog")
	vs, err := LoadVectors(writeFile(t, "v.txt", "the 1 1 1 1\n"), vocab)
	if err != nil {
		t.Fatal(err)
	}
	vs.FillMissing(rand.New(rand.NewSource(7)), 0.25)
	for id := int32(0); int(id) < vocab.Len(); id++ {
		row := vs.Row(id)
		zero := true
		for _, x := range row {
			if x < -0.25 || x > 0.25 && !vs.Found[id] {
				t.Errorf("row %d value %v out of range", id, x)
			}
			if x != 0 {
				zero = false
			}
		}
		switch {
		case id == PadID && !zero:
			t.Error("pad row filled")
		case id != PadID && zero:
			t.Errorf("row %d still zero", id)
		}
	}
	if !reflect.DeepEqual(vs.Row(2), []float32{1, 1, 1, 1}) {
		t.Error("found row changed")
	}
	// Deterministic for a seed.
	a, _ := LoadVectors(writeFile(t, "v.txt", "the 1 1\n"), vocab)
	b, _ := LoadVectors(writeFile(t, "v.txt", "the 1 1\n"), vocab)
	a.FillMissing(rand.New(rand.NewSource(3)), 1)
	b.FillMissing(rand.New(rand.NewSource(3)), 1)
	if !reflect.DeepEqual(a.Data, b.Data) {
		t.Error("FillMissing not deterministic")
	}
	if a.Row(-1) != nil || a.Row(99) != nil {
		t.Error("Row out of range")
	}
}

func TestVectorWords(t *testing.T) {
	got, err := VectorWords(writeFile(t, "v.vec.gz", "3 2\nthe 1 2\nnew york 0 1\n\nApple 3 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"the", "new york", "Apple"}; !slices.Equal(got, want) {
		t.Errorf("words %q, want %q", got, want)
	}
	_, err = VectorWords(writeFile(t, "bad.txt", "the 1 2\ncat 1\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("short line: error %v, want one naming bad.txt:2", err)
	}
}

// TestVectorsDimensionBounded: a header or first line with more dimensions
// than any real vectors file is an error naming file and line, before any
// table is allocated.
func TestVectorsDimensionBounded(t *testing.T) {
	vocab, _ := NewVocab([]string{PadWord, UnkWord, "good"})
	dir := t.TempDir()
	huge := "good" + strings.Repeat(" 0.5", MaxVectorDim+1) + "\n"
	for name, body := range map[string]string{
		"header.vec":      "3 200000\ngood 1 2\n",
		"firstline.vec":   huge,
		"ok-at-limit.vec": "good" + strings.Repeat(" 0.5", MaxVectorDim) + "\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		vs, err := LoadVectors(p, vocab)
		if name == "ok-at-limit.vec" {
			if err != nil || vs.Dim != MaxVectorDim {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "10000") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
