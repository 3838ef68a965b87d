package attack

import (
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
)

// tableLM scores a word by a fixed table, whatever its context; it counts
// its calls so a test can see the filter ran.
type tableLM struct {
	score map[string]float64
	calls int
}

func (m *tableLM) Name() string { return "table" }

func (m *tableLM) LogProb(words []string, i int) float64 {
	m.calls++
	return m.score[words[i]]
}

func TestLMTopNKeepsTheBestScoredSubstitutes(t *testing.T) {
	lm := &tableLM{score: map[string]float64{"fine": -5, "nice": -1, "great": -1, "okay": -9}}
	c := LMTopN{LM: lm, N: 2}
	got := c.Select(nil, []string{"a", "good", "movie"}, 1, []string{"fine", "nice", "okay", "great"})
	if want := []bool{false, true, false, true}; !slices.Equal(got, want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	// A tie at the cut keeps the earlier substitute.
	lm.score["great"] = -5
	got = c.Select(nil, []string{"a", "good", "movie"}, 1, []string{"fine", "nice", "okay", "great"})
	if want := []bool{true, true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("tie: kept %v, want %v", got, want)
	}
	if !strings.Contains(c.Name(), "top2") {
		t.Errorf("name %q", c.Name())
	}
}

// Through an attack: "good" can become "fine" or "nice", both flip the
// label, and the LM keeps only "nice", so every search must use it.
func TestLMTopNConstrainsTheAttack(t *testing.T) {
	tg, syn, _ := oneWord()
	for name, srch := range searches() {
		if name == "hla" { // HLA's hard-label search draws from the static candidate lists
			continue
		}
		lm := &tableLM{score: map[string]float64{"fine": -8, "nice": -2}}
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn},
			Pre: []PreConstraint{StopWords{Set: lexicon.FTML21()}, NoRepeat{}}, Post: []PostConstraint{LMTopN{LM: lm, N: 1}}, Search: srch}
		r, err := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != Successful || !strings.Contains(r.PerturbedText, "nice") || strings.Contains(r.PerturbedText, "fine") {
			t.Errorf("%s: %s %q", name, r.Type, r.PerturbedText)
		}
		if lm.calls == 0 {
			t.Errorf("%s: the language model was never asked", name)
		}
	}
}

func TestAlzantotRecipeUsesTheLanguageModel(t *testing.T) {
	_, syn, _ := oneWord()
	rc, err := LookupRecipe("alzantot")
	if err != nil {
		t.Fatal(err)
	}
	without, err := rc.Build(ProtocolPaper, Resources{Synonyms: syn})
	if err != nil {
		t.Fatal(err)
	}
	if len(without.Post) != 0 || !strings.Contains(strings.Join(without.Deviations, ";"), "omitted") {
		t.Errorf("without an LM: post %v, deviations %q", without.Post, without.Deviations)
	}
	with, err := rc.Build(ProtocolPaper, Resources{Synonyms: syn, LM: &tableLM{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(with.Post) != 1 || with.Post[0].(LMTopN).N != 4 || !strings.Contains(strings.Join(with.Deviations, ";"), "language model: table") {
		t.Errorf("with an LM: post %v, deviations %q", with.Post, with.Deviations)
	}
	// The FTML protocol has no language model (spec §9).
	ftml, err := rc.Build(ProtocolFTML, Resources{Synonyms: syn, LM: &tableLM{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ftml.Post) != 0 {
		t.Errorf("ftml protocol post %v", ftml.Post)
	}
}
