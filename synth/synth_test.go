package synth

import (
	"strings"
	"testing"
)

func TestSentimentLabelsFollowTheWords(t *testing.T) {
	lex := DefaultLexicon()
	ex := Sentiment(500, 0, 1)
	if len(ex) != 500 {
		t.Fatalf("%d examples", len(ex))
	}
	pos := 0
	for _, e := range ex {
		w := strings.Fields(e.Text)
		p, q := count(w, lex.Positive), count(w, lex.Negative)
		if p == q || (p > q) != (e.Label == 1) {
			t.Fatalf("label %d for %q (%d positive, %d negative words)", e.Label, e.Text, p, q)
		}
		pos += e.Label
	}
	if pos < 200 || pos > 300 {
		t.Fatalf("unbalanced: %d positive of 500", pos)
	}
	again := Sentiment(500, 0, 1)
	for i := range ex {
		if ex[i] != again[i] {
			t.Fatal("same seed gave a different task")
		}
	}
}
