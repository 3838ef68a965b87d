package text

import (
	"slices"
	"testing"
)

func TestSplitSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"One film. Two films!  Three? yes.", []string{"One film.", "Two films!", "Three? yes."}},
		{`He said "go." Then left.<br /><br />The end...`, []string{`He said "go."`, "Then left.", "The end..."}},
		{"It cost 3.5 dollars. 10 people came.", []string{"It cost 3.5 dollars.", "10 people came."}},
		{"  ", nil},
		{"no end", []string{"no end"}},
	} {
		if got := SplitSentences(c.in); !slices.Equal(got, c.want) {
			t.Errorf("SplitSentences(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
