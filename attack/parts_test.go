package attack

import (
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
)

func TestParseParts(t *testing.T) {
	_, syn, _ := oneWord()
	full := Resources{Synonyms: syn, Distance: fakeDistance{}, Encoder: bowEncoder{}, Tagger: nounTagger{}, LM: fakeLM{}}
	goals := map[string]Goal{"untargeted": Untargeted{}, "targeted:class=2": Targeted{Class: 2}, "hard-label": HardLabel{}}
	for s, want := range goals {
		if g, err := ParseGoal(s); err != nil || !reflect.DeepEqual(g, want) {
			t.Errorf("goal %q: %v, %v; want %v", s, g, err, want)
		}
	}
	searches := map[string]Search{
		"greedy":                      Greedy{Order: ByDelete},
		"greedy:order=pwws":           Greedy{Order: ByPWWS},
		"beam:width=3":                Beam{Width: 3},
		"genetic":                     Genetic{PopSize: 60, Generations: 20, Temp: 0.3, MaxSynonyms: 10},
		"genetic: pop=30 , gens=40":   Genetic{PopSize: 30, Generations: 40, Temp: 0.3, MaxSynonyms: 10},
		"pso:iters=40":                PSO{PopSize: 60, Iterations: 40, Omega1: 0.8, Omega2: 0.2, C1: 0.8, C2: 0.2, VMax: 3, MaxSynonyms: 10},
		"iga:max-replace=3":           IGA{PopSize: 60, Generations: 20, Temp: 0.3, MaxReplace: 3},
		"hla:pop=15,gens=50,init=500": HLA{Encoder: bowEncoder{}, PopSize: 15, Generations: 50, InitQueries: 500, Patience: 15, MaxEmpty: 15, MaxMutations: 25, Window: 40},
	}
	for s, want := range searches {
		if got, err := ParseSearch(s, full); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("search %q: %#v, %v; want %#v", s, got, err, want)
		}
	}
	pres := map[string]PreConstraint{
		"repeat":               NoRepeat{},
		"max-rate:rate=0.2":    MaxModificationRate{Rate: 0.2},
		"min-length:min=4":     MinWordLength{Min: 4},
		"protect:words=not|no": Protected{Words: map[string]bool{"not": true, "no": true}},
		"stopwords:list=ftml":  StopWords{Set: lexicon.FTML21(), Desc: "ftml-21"},
	}
	for s, want := range pres {
		pre, post, err := ParseConstraint(s, full)
		if err != nil || post != nil || !reflect.DeepEqual(pre, want) {
			t.Errorf("constraint %q: %#v %#v %v; want %#v", s, pre, post, err, want)
		}
	}
	posts := map[string]PostConstraint{
		"embedding:max=0.4":     WordEmbeddingDistance{Space: fakeDistance{}, Max: 0.4},
		"pos":                   PartOfSpeech{Tagger: nounTagger{}, AllowNounVerb: true},
		"use:min=0.7,window=10": SentenceSimilarity{Encoder: bowEncoder{}, Threshold: 0.7, Window: 10, SkipShort: true},
		"lm-top":                LMTopN{LM: fakeLM{}, N: 4},
	}
	for s, want := range posts {
		pre, post, err := ParseConstraint(s, full)
		if err != nil || pre != nil || !reflect.DeepEqual(post, want) {
			t.Errorf("constraint %q: %#v %#v %v; want %#v", s, pre, post, err, want)
		}
	}
	if tr, err := ParseTransformation("synonyms", full); err != nil || tr.Name() != "word-swap(test)" {
		t.Errorf("transformation synonyms: %v %v", tr, err)
	}

	// Bad specs: each error names the problem and, for names, the valid ones.
	bad := map[string]func() error{
		`unknown search "greedy-wir" (valid: greedy, beam, genetic, pso, iga, hla)`: func() error { _, err := ParseSearch("greedy-wir", full); return err },
		"unknown constraint \"usee\" (valid: repeat, stopwords,":                    func() error { _, _, err := ParseConstraint("usee", full); return err },
		"unknown goal":           func() error { _, err := ParseGoal("flip"); return err },
		"unknown transformation": func() error { _, err := ParseTransformation("hownet", full); return err },
		"genetic: unknown parameter popsize (valid: gens, pop, temp)": func() error { _, err := ParseSearch("genetic:popsize=3", full); return err },
		"repeat takes no parameters":                                  func() error { _, _, err := ParseConstraint("repeat:x=1", full); return err },
		"beam: width=0 must be in [1, 100000]":                        func() error { _, err := ParseSearch("beam:width=0", full); return err },
		"pso: iters=\"x\" is not a whole number":                      func() error { _, err := ParseSearch("pso:iters=x", full); return err },
		"max-rate: rate=2 must be in (0, 1]":                          func() error { _, _, err := ParseConstraint("max-rate:rate=2", full); return err },
		"stopwords: list=\"nope\"":                                    func() error { _, _, err := ParseConstraint("stopwords:list=nope", full); return err },
		"targeted: give the target class":                             func() error { _, err := ParseGoal("targeted"); return err },
		"want key=value":                                              func() error { _, err := ParseSearch("beam:4", full); return err },
		"given twice":                                                 func() error { _, err := ParseSearch("beam:width=2,width=3", full); return err },
		"needs word vectors (--vectors)":                              func() error { _, _, err := ParseConstraint("embedding", Resources{}); return err },
		"needs a language model (--lm)":                               func() error { _, _, err := ParseConstraint("lm-top", Resources{}); return err },
		"hla needs a sentence encoder":                                func() error { _, err := ParseSearch("hla", Resources{}); return err },
		"transformation wordnet needs WordNet":                        func() error { _, err := ParseTransformation("wordnet", Resources{}); return err },
	}
	for want, f := range bad {
		if err := f(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	}
}

// An attack composed from parsed parts behaves like the hand-built one.
func TestComposedAttackFlipsOneWord(t *testing.T) {
	tg, syn, _ := oneWord()
	r := Resources{Synonyms: syn}
	tr, err1 := ParseTransformation("synonyms", r)
	s, err2 := ParseSearch("beam:width=2", r)
	pre, _, err3 := ParseConstraint("stopwords:list=ftml", r)
	g, err4 := ParseGoal("untargeted")
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			t.Fatal(err)
		}
	}
	a := &Attack{Goal: g, Transformation: tr, Pre: []PreConstraint{pre}, Search: s}
	res, err := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0)
	if err != nil || res.Type != Successful || res.NumPerturbed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

type fakeDistance struct{}

func (fakeDistance) Name() string                         { return "fake" }
func (fakeDistance) Distance(a, b string) (float64, bool) { return 0, true }

type nounTagger struct{}

func (nounTagger) Name() string { return "nouns" }
func (nounTagger) Tag(words []string) []string {
	out := make([]string, len(words))
	for i := range out {
		out[i] = "NOUN"
	}
	return out
}

type fakeLM struct{}

func (fakeLM) Name() string                          { return "fake" }
func (fakeLM) LogProb(words []string, i int) float64 { return 0 }

// TestPartsRejectHugeAndNonFiniteParameters: sizes beyond any real use
// and NaN/infinite numbers are parse errors naming the parameter (they ran
// out of memory or passed silently).
func TestPartsRejectHugeAndNonFiniteParameters(t *testing.T) {
	_, syn, _ := oneWord()
	full := Resources{Synonyms: syn, Distance: fakeDistance{}, Encoder: bowEncoder{}, Tagger: nounTagger{}, LM: fakeLM{}}
	for _, s := range []string{"genetic:pop=100000000", "beam:width=1000000", "pso:iters=200000", "hla:init=1000001"} {
		if _, err := ParseSearch(s, full); err == nil || !strings.Contains(err.Error(), "must be in [1, 100000]") {
			t.Errorf("search %q: %v", s, err)
		}
	}
	for _, s := range []string{"max-rate:rate=nan", "embedding:max=+Inf", "use:min=NaN"} {
		if _, _, err := ParseConstraint(s, full); err == nil || !strings.Contains(err.Error(), "finite") {
			t.Errorf("constraint %q: %v", s, err)
		}
	}
	if _, err := ParseSearch("genetic:temp=nan", full); err == nil {
		t.Error("genetic:temp=nan accepted")
	}
}
