package lexicon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFTML21(t *testing.T) {
	w := FTML21Words()
	eq(t, "FTML21 words", strings.Join(w, " "), "the a an to of and with as at by is was are were be he she they their this that")
	if len(FTML21()) != 21 {
		t.Errorf("FTML21 has %d distinct words, want 21", len(FTML21()))
	}
	if !FTML21().Has("the") || FTML21().Has("not") {
		t.Error("FTML21 membership wrong")
	}
}

func TestNLTKStopwords(t *testing.T) {
	s := NLTKStopwords()
	if len(s) != 179 {
		t.Errorf("NLTK list has %d distinct words, want 179", len(s))
	}
	if !s.Has("wouldn't") || !s.Has("i") || s.Has("movie") {
		t.Error("NLTK membership wrong")
	}
}

func TestTextFoolerEmbedded(t *testing.T) {
	w := TextFoolerWords()
	if len(w) != 266 || len(TextFooler()) != 266 {
		t.Fatalf("TextFooler list: %d words, %d distinct; want 266", len(w), len(TextFooler()))
	}
	eq(t, "first", w[:3], []string{"a", "about", "above"})
	eq(t, "last", w[len(w)-1], "yourselves")
	for _, s := range []string{"the", "not", "nobody", "won't", "should've", "it's"} {
		if !TextFooler().Has(s) {
			t.Errorf("TextFooler lacks %q", s)
		}
	}
	// FTML's list is a subset of TextFooler's except for "be", which
	// TextFooler lets attacks change.
	var notIn []string
	for _, s := range FTML21Words() {
		if !TextFooler().Has(s) {
			notIn = append(notIn, s)
		}
	}
	eq(t, "FTML21 words not in the TextFooler list", notIn, []string{"be"})
}

// The compiled-in list must be the data file, word for word and in order.
func TestTextFoolerEqualsDataFile(t *testing.T) {
	path := realFile(t, "stopwords/textfooler_stopwords.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "embedded list", TextFoolerWords(), strings.Fields(string(data)))
	eq(t, "embedded text", strings.TrimPrefix(textFoolerStopwords, "\n"), string(data))
	s, err := LoadStopwords(path)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "LoadStopwords", s, TextFooler())
}

func TestLoadStopwords(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stop.txt")
	writeFile(t, p, "the\r\n\n  a \nan\n")
	s, err := LoadStopwords(p)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "set", s, NewStopSet("the", "a", "an"))

	writeFile(t, p, "the\nnot a word\n")
	if _, err := LoadStopwords(p); err == nil || !strings.Contains(err.Error(), p+":2:") {
		t.Errorf("two words on a line: err = %v, want one naming %s:2", err, p)
	}
	if _, err := LoadStopwords(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing file: no error")
	}
}
