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

func TestSentimentRareSkewsGroups(t *testing.T) {
	lex := DefaultLexicon()
	head, rare := 0, 0
	for _, e := range SentimentRare(2000, 0, 0.05, 3) {
		p, q := 0, 0
		for _, w := range strings.Fields(e.Text) {
			for pol, groups := range [][][]string{lex.Negative, lex.Positive} {
				for _, g := range groups {
					for i, s := range g {
						if w != s {
							continue
						}
						if i == 0 {
							head++
						} else {
							rare++
						}
						if pol == 1 {
							p++
						} else {
							q++
						}
					}
				}
			}
		}
		if want := map[bool]int{true: 1, false: 0}[p > q]; e.Label != want || p == q {
			t.Fatalf("%q: label %d with %d positive and %d negative words", e.Text, e.Label, p, q)
		}
	}
	if share := float64(rare) / float64(head+rare); share < 0.03 || share > 0.07 {
		t.Errorf("rare synonyms are %.3f of sentiment words, want about 0.05", share)
	}
}
