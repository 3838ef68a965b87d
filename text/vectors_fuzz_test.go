package text

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fuzzVectorWords are the vocabulary FuzzLoadVectors looks words up in:
// lower-case words (matched exactly or by case folding), a word with a
// space, one that looks like a number, and the reserved tokens.
var fuzzVectorWords = []string{"the", "cat", "apple", "new york", "3", "nan"}

// FuzzLoadVectors: LoadVectors and VectorWords return a value or an error
// (with a message), never panic. An accepted table has the vocabulary's
// shape, a dimension in [1, MaxVectorDim], finite values and a zero padding
// row; VectorWords accepts whatever LoadVectors does; and the rows found,
// written back as a GloVe file, load again unchanged.
func FuzzLoadVectors(f *testing.F) {
	seeds := []string{
		"the 1 2 3\nzebra 9 9 9\nApple 4 5 6\ncat 7 8 9\napple 1.5 -2.5 3e-1\nnew york 0 1 0\n",
		"4 2 \r\nthe 1 2 \r\nCAT 3 4 \r\nCat 5 6 \r\n<pad> 9 9\r\n",
		"0 5\n",
		"3 1\n3 0.5\n",
		"the\t1\t2\n\n<unk> 1 1\n",
		"the 1 2\ncat 1 2 3\n",
		"2 3\nthe 1 2\n",
		"the 1 2\ncat 1 zz\n",
		"the NaN 1\n",
		"cat 1e39\n",
		"999999999 999999999\nthe 1\n",
		"99999999999 99999999999\nthe 1\n",
		"the\n",
		"",
		"\xff\xfe\x00 1\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(seeds[0]), true)
	vocab, err := NewVocab(append([]string{PadWord, UnkWord}, fuzzVectorWords...))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		dir := t.TempDir()
		p := filepath.Join(dir, "v.txt")
		if gz {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(data)
			zw.Close()
			data, p = b.Bytes(), p+".gz"
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		vs, err := LoadVectors(p, vocab)
		words, werr := VectorWords(p)
		for _, e := range []error{err, werr} {
			if e != nil && strings.TrimSpace(e.Error()) == "" {
				t.Fatalf("error with an empty message: %#v", e)
			}
		}
		if err != nil {
			return
		}
		if werr != nil {
			t.Fatalf("LoadVectors accepts the file, VectorWords does not: %v", werr)
		}
		n := vocab.Len()
		if vs.Dim < 1 || vs.Dim > MaxVectorDim || len(vs.Data) != n*vs.Dim || len(vs.Found) != n {
			t.Fatalf("dim %d, %d values, %d found flags for %d words", vs.Dim, len(vs.Data), len(vs.Found), n)
		}
		found := 0
		for id := range vs.Found {
			if vs.Found[id] {
				found++
			}
		}
		if found != vs.NumFound || vs.Found[PadID] || found > len(words) {
			t.Fatalf("NumFound %d, %d rows found (pad %v), %d words in the file", vs.NumFound, found, vs.Found[PadID], len(words))
		}
		var out strings.Builder
		for id := int32(0); int(id) < n; id++ {
			row := vs.Row(id)
			for _, v := range row {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("row %q holds %v", vocab.Word(id), v)
				}
				if !vs.Found[id] && v != 0 {
					t.Fatalf("row %q was not found but holds %v", vocab.Word(id), v)
				}
			}
			if !vs.Found[id] {
				continue
			}
			out.WriteString(vocab.Word(id))
			for _, v := range row {
				out.WriteString(" " + strconv.FormatFloat(float64(v), 'g', -1, 32))
			}
			out.WriteString("\n")
		}
		if vs.NumFound == 0 {
			return
		}
		// With a header: a first row "3 1" (the word "3") would be one.
		back := filepath.Join(dir, "back.txt")
		file := strconv.Itoa(vs.NumFound) + " " + strconv.Itoa(vs.Dim) + "\n" + out.String()
		if err := os.WriteFile(back, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		vs2, err := LoadVectors(back, vocab)
		if err != nil {
			t.Fatalf("re-reading the rows found: %v\n%s", err, file)
		}
		if vs2.Dim != vs.Dim || !slices.Equal(vs2.Data, vs.Data) || !slices.Equal(vs2.Found, vs.Found) || vs2.NumFound != vs.NumFound {
			t.Fatalf("round trip changed the table:\n%s", file)
		}
	})
}

// TestVectorsHugeHeader: a header whose sizes do not fit any integer type
// is still the header, reported at line 1 with the limit it exceeds (it
// was taken for a one-value vector of the word "99999999999" and reported
// at line 2 as a dimension mismatch).
func TestVectorsHugeHeader(t *testing.T) {
	vocab := testVocab(t, "the")
	for _, c := range []struct{ content, want string }{
		{"999999999 999999999\nthe 1 2\n", `:1: header "999999999 999999999": dimension 999999999 is above the 10000 this reader accepts`},
		{"99999999999 99999999999\nthe 1 2\n", `:1: header "99999999999 99999999999": dimension 99999999999 is above the 10000 this reader accepts`},
		{"5 99999999999999999999999\nthe 1 2\n", `:1: header "5 99999999999999999999999": dimension 99999999999999999999999 is above the 10000 this reader accepts`},
		{"5 " + strings.Repeat("9", 100) + "\nthe 1 2\n", `:1: header "5 99999999999999999999... (100 digits)": dimension 99999999999999999999... (100 digits) is above the 10000`},
		{strings.Repeat("9", 30) + " 5\nthe 1 2\n", ":1: header \"" + strings.Repeat("9", 20) + "... (30 digits) 5\": word count"},
	} {
		p := writeFile(t, "v.vec", c.content)
		for _, load := range []func() error{
			func() error { _, err := LoadVectors(p, vocab); return err },
			func() error { _, err := VectorWords(p); return err },
		} {
			err := load()
			if err == nil || !strings.Contains(err.Error(), p+c.want) {
				t.Errorf("%.40q: error %v, want one containing %q", c.content, err, p+c.want)
			}
		}
	}
	// "N 0" is no header but a vector line of the word "N", whatever N.
	for _, n := range []string{"3", strings.Repeat("9", 30)} {
		words, err := VectorWords(writeFile(t, "v.vec", n+" 0\nthe 1\n"))
		if err != nil || len(words) != 2 || words[0] != n {
			t.Errorf("%s 0: words %q, error %v", n, words, err)
		}
	}
}

// TestVectorsNonFinite: "NaN" and "Inf" parse as numbers but are refused
// in a row that is used, naming the file, line and value.
func TestVectorsNonFinite(t *testing.T) {
	vocab := testVocab(t, "the")
	for _, v := range []string{"NaN", "inf", "-Infinity"} {
		p := writeFile(t, "v.txt", "zebra 1 "+v+"\nthe 1 "+v+"\n")
		_, err := LoadVectors(p, vocab)
		if want := p + `:2: value 2 of "the": "` + v + `" is not a finite number`; err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", v, err, want)
		}
	}
}
