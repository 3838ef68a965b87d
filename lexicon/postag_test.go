package lexicon

import (
	"strings"
	"testing"
)

func TestPOSTaggerSuffixRules(t *testing.T) {
	tg := POSTagger{}
	cases := []struct{ in, want string }{
		{"the cat sat on the mat .", "DET NOUN NOUN ADP DET NOUN ."},
		{"he quickly walked to 42 houses", "PRON ADV VERB PRT NUM NOUN"},
		{"a wonderful and hopeless story", "DET ADJ CONJ ADJ NOUN"},
		{"it was not very realistic", "PRON VERB ADV ADV ADJ"},
	}
	for _, c := range cases {
		if got := strings.Join(tg.Tag(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPOSTaggerWordNet(t *testing.T) {
	wn, _ := realWordNet(t)
	tg := POSTagger{WN: wn}
	cases := []struct{ in, want string }{
		{"the movie was good", "DET NOUN VERB ADJ"},
		{"a good movie", "DET ADJ NOUN"},
		{"they run fast", "PRON VERB ADV"},
		{"the run was long", "DET NOUN VERB ADJ"},
		{"i love this film", "PRON VERB DET NOUN"},
		{"the plot is boring and the actors are terrible", "DET NOUN VERB ADJ CONJ DET NOUN VERB ADJ"},
		{"she walked slowly", "PRON VERB ADV"},
	}
	for _, c := range cases {
		if got := strings.Join(tg.Tag(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
