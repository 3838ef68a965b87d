package attack

import (
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// trap is a victim on which the best single substitution is a dead end:
// a→a1 lowers p(positive) most, but only a→a2 together with b→b1 flips it.
type trap struct{ v *text.Vocab }

func (m trap) Predict(seqs [][]int32) [][]float32 {
	out := make([][]float32, len(seqs))
	for k, s := range seqs {
		has := func(w string) bool { return slices.Contains(s, m.v.ID(w)) }
		p := float32(0.9)
		switch {
		case has("a2") && has("b1"):
			p = 0.1
		case has("a1") && has("b1"):
			p = 0.7
		case has("a1"):
			p = 0.8
		case has("b1"):
			p = 0.85
		}
		out[k] = []float32{1 - p, p}
	}
	return out
}

func TestBeamEscapesTheGreedyTrap(t *testing.T) {
	v, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "x", "a", "a1", "a2", "b", "b1"})
	syn := lexicon.NewNeighbors("test")
	syn.Set("a", []string{"a1", "a2"})
	syn.Set("b", []string{"b1"})
	tg := Target{Victim: trap{v}, Vocab: v, Tok: text.NewWhitespace()}
	run := func(s Search) Result {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Pre: []PreConstraint{NoRepeat{}}, Search: s}
		r, err := a.Run(tg, Example{Text: "x a x b", Label: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, s := range []Search{Beam{Width: 1}, Greedy{Order: ByDelete}} {
		if r := run(s); r.Type != Failed {
			t.Errorf("%s: %+v, want the greedy trap to hold", s.Name(), r)
		}
	}
	r := run(Beam{Width: 2})
	if r.Type != Successful || r.PerturbedText != "x a2 x b1" || r.NumPerturbed != 2 {
		t.Errorf("beam(2): %+v, want x a2 x b1", r)
	}
	// Width 1 scans 3 substitutions, then 1; width 2 scans 3, then the
	// distinct texts around a1 and b1 (a1 b1 counted once, a2 b1).
	if r.NumQueries != 1+3+2 {
		t.Errorf("beam(2): %d queries, want 6", r.NumQueries)
	}
}

// The gradient order visits the word the loss is most sensitive to first:
// with two deciding words it changes the heavier one, in the fewest queries.
func TestGradientOrder(t *testing.T) {
	tg, syn, m := oneWord()
	m.w[tg.Vocab.ID("truly")] = 0.5 // a lighter positive word with a synonym
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Pre: []PreConstraint{NoRepeat{}}, Search: Greedy{Order: ByGradient}}
	r, err := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0)
	if err != nil || r.Type != Successful || r.NumPerturbed != 1 || strings.Contains(r.PerturbedText, "good") {
		t.Fatalf("%+v %v", r, err)
	}
	// 1 original + the 2 substitutes of "good": no query ranks the words.
	if r.NumQueries != 3 {
		t.Errorf("%d queries, want 3", r.NumQueries)
	}
	tg.InputGrad = nil
	if _, err := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 0); err == nil {
		t.Error("gradient order without InputGrad: no error")
	}
}
