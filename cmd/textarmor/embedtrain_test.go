package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/text"
)

// writeSST2Sent lays out a generated sst2-sent preset under dir: synth
// sentiment texts, with "devonly" and "testonly" (capitalised, so the preset's
// tokenizer has to lower-case them) many times in dev and test only.
func writeSST2Sent(t *testing.T, dir string) {
	t.Helper()
	sub := filepath.Join(dir, "sst2-stsa")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, split := range []string{"train", "dev", "test"} {
		var b strings.Builder
		for _, e := range synth.Sentiment(300, 0, int64(i+1)) {
			txt := e.Text
			switch split {
			case "dev":
				txt += " DevOnly"
			case "test":
				txt += " TestOnly"
			}
			fmt.Fprintf(&b, "%d %s\n", e.Label, txt)
		}
		if err := os.WriteFile(filepath.Join(sub, "stsa.binary."+split), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadWords reads a word2vec text file's words and checks that text.
// LoadVectors accepts it and finds every one of them.
func loadWords(t *testing.T, path string, dim int) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var n, d int
	if _, err := fmt.Sscanf(lines[0], "%d %d", &n, &d); err != nil || n != len(lines)-1 || d != dim {
		t.Fatalf("header %q for %d lines (want dim %d)", lines[0], len(lines)-1, dim)
	}
	words := []string{text.PadWord, text.UnkWord}
	for _, l := range lines[1:] {
		words = append(words, strings.Fields(l)[0])
	}
	vocab, err := text.NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := text.LoadVectors(path, vocab)
	if err != nil {
		t.Fatal(err)
	}
	if vs.Dim != dim || vs.NumFound != n {
		t.Fatalf("LoadVectors: dim %d, %d of %d words found", vs.Dim, vs.NumFound, n)
	}
	return words[2:]
}

func TestEmbedTrain(t *testing.T) {
	dir := t.TempDir()
	writeSST2Sent(t, dir)
	out := filepath.Join(dir, "vec.txt")
	args := []string{"embed", "train", "--dataset", "sst2-sent", "--data", dir, "--out", out,
		"--dim", "8", "--epochs", "2", "--min-count", "2", "--workers", "2", "--json"}
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Vocab          int     `json:"vocab"`
		CorpusTokens   int64   `json:"corpus_tokens"`
		WordsPerSecond float64 `json:"words_per_second"`
		Sources        []struct {
			Name  string `json:"name"`
			Texts int    `json:"texts"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("--json output %q: %v", stdout, err)
	}
	if rep.Vocab < 20 || rep.CorpusTokens < 300*8 || rep.WordsPerSecond <= 0 || len(rep.Sources) != 1 ||
		rep.Sources[0].Texts != 300 || rep.Sources[0].Name != "sst2-sent train" {
		t.Errorf("summary %+v", rep)
	}
	for _, want := range []string{"corpus tokens", "vocabulary", "words/s", " s:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	words := loadWords(t, out, 8)
	if len(words) != rep.Vocab {
		t.Errorf("%d words in the file, summary says %d", len(words), rep.Vocab)
	}
	for _, w := range words {
		if w == "devonly" || w == "testonly" {
			t.Errorf("%q comes from the dev/test split", w)
		}
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Same flags, same file (the output is replaced atomically).
	if code, _, stderr := runCmd(t, args...); code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	if again, _ := os.ReadFile(out); string(again) != string(first) {
		t.Error("the same seed wrote different vectors")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".vec.txt.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// A plain-text corpus: lower-cased, split on white space.
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte(strings.Repeat("The Cat sat on the MAT\n\n", 20)+"rare\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "corpus.vec")
	if code, _, stderr := runCmd(t, "embed", "train", "--corpus", corpus, "--out", out2, "--dim", "4", "--epochs", "1"); code != 0 {
		t.Fatalf("--corpus: exit %d: %s", code, stderr)
	}
	if got := strings.Join(loadWords(t, out2, 4), " "); got != "the cat mat on sat" {
		t.Errorf("--corpus words %q, want \"the cat mat on sat\" (by count, then bytes; rare < min count)", got)
	}
}

func TestEmbedTrainErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, []byte("\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "v.txt")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--corpus", filepath.Join(dir, "missing.txt"), "--out", out}, 1, "missing.txt"},
		{[]string{"--corpus", empty, "--out", out}, 1, "empty corpus"},
		{[]string{"--corpus", empty, "--out", out, "--dim", "0"}, 2, "--dim 0"},
		{[]string{"--corpus", empty, "--out", out, "--window", "-1"}, 2, "window"},
		{[]string{"--out", out}, 2, "no corpus"},
		{[]string{"--corpus", empty}, 2, "--out is required"},
		{[]string{"--dataset", "nope", "--out", out}, 2, "nope"},
		{[]string{"--dataset", "mr,mr", "--out", out}, 2, "twice"},
		{[]string{"--dataset", "mr", "--data", dir, "--out", out}, 1, "rt-polarity"},
		{[]string{"--corpus", empty, "--out", dir}, 2, "directory"},
		{[]string{"--corpus", empty, "--out", filepath.Join(dir, "no", "such", "dir", "v.txt")}, 1, "--out"},
	} {
		code, _, stderr := runCmd(t, append([]string{"embed", "train"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s", out)
	}
	if code, _, stderr := runCmd(t, "embed", "train", "--help"); code != 0 || !strings.Contains(stderr, "min-count") {
		t.Errorf("embed train --help: %d %s", code, stderr)
	}
}
