package text

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/realdata"
)

func dataDir(t *testing.T) string { return realdata.Dir(t) }

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("real data file missing: %v", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestRealDataOffsets runs every tokenizer over real corpora (SST-2, IMDB
// reviews with <br /> tags, TREC with a Latin-1 byte, MR) and checks the span
// invariants on every token.
func TestRealDataOffsets(t *testing.T) {
	dir := dataDir(t)
	var texts []string
	for _, l := range readLines(t, filepath.Join(dir, "sst2-glue", "train.tsv"))[1:] {
		texts = append(texts, strings.SplitN(l, "\t", 2)[0])
	}
	for _, l := range readLines(t, filepath.Join(dir, "mr", "rt-polarity.utf8.tsv")) {
		texts = append(texts, strings.SplitN(l, "\t", 2)[1])
	}
	texts = append(texts, readLines(t, filepath.Join(dir, "trec", "TREC.train"))...)
	for _, l := range readLines(t, filepath.Join(dir, "imdb", "train.part-00.tsv.gz")) {
		f := strings.SplitN(l, "\t", 4)
		texts = append(texts, f[3])
	}
	for _, name := range []string{"flat", "ftml", "whitespace"} {
		tk := mustTokenizer(t, name)
		n := 0
		for _, s := range texts {
			toks := tk.Tokenize(s)
			checkOffsets(t, name, s, toks)
			n += len(toks)
			if name == "ftml" {
				for _, x := range toks {
					if strings.Contains(x.Text, "<br") {
						t.Fatalf("ftml kept a <br> tag: %q in %q", x.Text, s)
					}
				}
			}
		}
		t.Logf("%s: %d texts, %d tokens", name, len(texts), n)
	}
}

// TestRealDataFlatVocab reports the FLAT-cleaned vocabulary sizes next to the
// FLAT paper's Table 6 (13,838 for SST-2 with threshold 0; 8,095 for TREC).
// The paper's numbers come from splits we cannot reconstruct exactly (e.g. the
// TREC dev hold-out), so this only checks the order of magnitude.
func TestRealDataFlatVocab(t *testing.T) {
	dir := dataDir(t)
	tk := NewFlat()
	var sst [][]string
	for _, l := range readLines(t, filepath.Join(dir, "sst2-stsa", "stsa.binary.train")) {
		sst = append(sst, Texts(tk.Tokenize(l[2:])))
	}
	var trec [][]string
	for _, l := range readLines(t, filepath.Join(dir, "trec", "TREC.train")) {
		trec = append(trec, Texts(tk.Tokenize(l[strings.IndexByte(l, ' ')+1:])))
	}
	for _, c := range []struct {
		name  string
		docs  [][]string
		paper int
	}{{"sst2 sentences", sst, 13838}, {"trec", trec, 8095}} {
		n := BuildVocab(c.docs, 1, 0).Len() - 2
		t.Logf("%s: %d words (FLAT Table 6: %d)", c.name, n, c.paper)
		if n < c.paper/2 || n > c.paper*2 {
			t.Errorf("%s: %d words, far from the paper's %d", c.name, n, c.paper)
		}
	}
}
