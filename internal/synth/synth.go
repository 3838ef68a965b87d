// Package synth generates small labelled text tasks whose right answers are
// known, for the demo and for tests that must not depend on downloads.
package synth

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/textarmor/textarmor/dataset"
)

// Lexicon is the generated task's word list: sentiment words come in
// synonym groups so attacks and defenses have something to swap.
type Lexicon struct {
	Positive, Negative [][]string // synonym groups
	Neutral            []string
}

// DefaultLexicon is a fixed English-looking vocabulary.
func DefaultLexicon() Lexicon {
	return Lexicon{
		Positive: [][]string{
			{"good", "fine", "decent", "nice"}, {"great", "excellent", "superb", "terrific"},
			{"enjoyable", "pleasant", "delightful"}, {"brilliant", "outstanding", "remarkable"},
			{"funny", "amusing", "witty"}, {"moving", "touching", "poignant"},
		},
		Negative: [][]string{
			{"bad", "poor", "lousy", "awful"}, {"boring", "dull", "tedious", "tiresome"},
			{"terrible", "horrible", "dreadful"}, {"weak", "feeble", "flimsy"},
			{"silly", "foolish", "stupid"}, {"messy", "sloppy", "clumsy"},
		},
		Neutral: strings.Fields("the a film movie story plot actor actress director scene script " +
			"it this that was is has had with and of to in on for its his her their cast ending " +
			"music camera sequel character dialogue minutes hour screen audience picture"),
	}
}

// Sentiment makes n examples of 8–20 words. Each holds one to three
// sentiment words; the label (0 negative, 1 positive) is the majority
// polarity, and ties are redrawn. noise is the share of labels flipped.
func Sentiment(n int, noise float64, seed int64) []dataset.Example {
	return sentiment(n, noise, -1, seed)
}

// SentimentRare is Sentiment with skewed synonym groups: each group's first
// word is drawn with probability 1 − rare and its other words share rare.
// A model then sees the rare synonyms a few times only, so their embeddings
// stay close to their random start and swapping a common word for one can
// flip it — the weakness synonym attacks exploit and FTML removes.
func SentimentRare(n int, noise, rare float64, seed int64) []dataset.Example {
	return sentiment(n, noise, rare, seed)
}

// sentiment draws group members uniformly when rare < 0 (Sentiment's
// original stream of random numbers).
func sentiment(n int, noise, rare float64, seed int64) []dataset.Example {
	lex := DefaultLexicon()
	r := rand.New(rand.NewSource(seed))
	out := make([]dataset.Example, 0, n)
	for len(out) < n {
		length := 8 + r.Intn(13)
		words := make([]string, length)
		for i := range words {
			words[i] = lex.Neutral[r.Intn(len(lex.Neutral))]
		}
		k := 1 + r.Intn(3)
		pos := 0
		for j := 0; j < k; j++ {
			groups := lex.Negative
			if r.Intn(2) == 0 {
				groups, pos = lex.Positive, pos+1
			}
			g := groups[r.Intn(len(groups))]
			w := g[0]
			switch {
			case rare < 0:
				w = g[r.Intn(len(g))]
			case r.Float64() < rare:
				w = g[1+r.Intn(len(g)-1)]
			}
			words[r.Intn(length)] = w
		}
		// Recount: a later sentiment word may have overwritten an earlier one.
		p, q := count(words, lex.Positive), count(words, lex.Negative)
		if p == q {
			continue
		}
		label := 0
		if p > q {
			label = 1
		}
		if r.Float64() < noise {
			label = 1 - label
		}
		out = append(out, dataset.Example{Text: strings.Join(words, " "), Label: label})
	}
	return out
}

func count(words []string, groups [][]string) int {
	n := 0
	for _, w := range words {
		for _, g := range groups {
			for _, s := range g {
				if w == s {
					n++
				}
			}
		}
	}
	return n
}

// SentimentDataset wraps Sentiment as a dataset with train, dev and test.
func SentimentDataset(train, dev, test int, seed int64) *dataset.Dataset {
	return &dataset.Dataset{
		Name:    "synthetic-sentiment",
		Classes: []string{"negative", "positive"},
		Train:   Sentiment(train, 0.02, seed),
		Dev:     Sentiment(dev, 0, seed+1),
		Test:    Sentiment(test, 0, seed+2),
		Notes:   []string{fmt.Sprintf("generated: %d/%d/%d examples, seed %d, 2%% label noise in train", train, dev, test, seed)},
	}
}

// Synonyms maps every sentiment word to the other words of its group: the
// generated task's ground-truth synonym table.
func (l Lexicon) Synonyms() map[string][]string {
	out := map[string][]string{}
	for _, groups := range [][][]string{l.Positive, l.Negative} {
		for _, g := range groups {
			for _, w := range g {
				for _, u := range g {
					if u != w {
						out[w] = append(out[w], u)
					}
				}
			}
		}
	}
	return out
}

// SentimentRareDataset wraps SentimentRare as a dataset; every split has the
// same skew.
func SentimentRareDataset(train, dev, test int, rare float64, seed int64) *dataset.Dataset {
	return &dataset.Dataset{
		Name:    "synthetic-sentiment-rare-synonyms",
		Classes: []string{"negative", "positive"},
		Train:   SentimentRare(train, 0.02, rare, seed),
		Dev:     SentimentRare(dev, 0, rare, seed+1),
		Test:    SentimentRare(test, 0, rare, seed+2),
		Notes: []string{fmt.Sprintf("generated: %d/%d/%d examples, seed %d, 2%% label noise in train, rare synonyms drawn with probability %g",
			train, dev, test, seed, rare)},
	}
}
