package attack

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeMLM proposes, for a masked "good" after "truly", the words a masked
// LM would ("good" itself among them, in another case), and records what
// it was asked.
type fakeMLM struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeMLM) Name() string { return "fake" }

func (f *fakeMLM) Masked(words []string, i, k int, minProb float64) []string {
	f.record("masked", words, i, k, minProb)
	if words[i] == "good" && i > 0 && words[i-1] == "truly" {
		return []string{"GOOD", "great", "fine"}[:min(k, 3)]
	}
	return nil
}

func (f *fakeMLM) InPlace(words []string, i, k int) []string {
	f.record("in-place", words, i, k, 0)
	if words[i] == "good" {
		return []string{"fine", "good"}
	}
	return nil
}

func (f *fakeMLM) record(how string, words []string, i, k int, p float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, strings.Join([]string{how, strings.Join(words, " "), words[i], strings.Repeat("k", k), strings.Repeat("p", int(p*1e4))}, "|"))
}

// The swap asks the LM the method's question with the recipe's K (and
// BAE's floor), in the word's own context, and drops the word itself.
func TestMaskedLMSwap(t *testing.T) {
	lm := &fakeMLM{}
	words := []string{"the", "movie", "was", "truly", "good"}
	bae := MaskedLMSwap{LM: lm, Method: MethodBAE, K: 3, MinProb: 5e-4}
	if got := bae.Substitutes(words, 4); !slices.Equal(got, []string{"great", "fine"}) {
		t.Errorf("bae: %v", got)
	}
	ba := MaskedLMSwap{LM: lm, Method: MethodBERTAttack, K: 2}
	if got := ba.Substitutes(words, 4); !slices.Equal(got, []string{"fine"}) {
		t.Errorf("bert-attack: %v", got)
	}
	want := []string{"masked|the movie was truly good|good|kkk|ppppp", "in-place|the movie was truly good|good|kk|"}
	if !slices.Equal(lm.calls, want) {
		t.Errorf("asked %q", lm.calls)
	}
	if !strings.Contains(bae.Name(), "fake,bae,k=3") {
		t.Errorf("name %s", bae.Name())
	}
}

// The recipes as TextAttack builds them; the resources they lack are
// errors (the LM) or declared deviations (the encoder, the tagger); and
// they flip the bag-of-words victim with the LM's candidate.
func TestContextualRecipes(t *testing.T) {
	lm := &fakeMLM{}
	for _, name := range []string{"bae", "bert-attack"} {
		rc, err := LookupRecipe(name)
		if err != nil {
			t.Fatal(err)
		}
		n := rc.Needs(ProtocolPaper)
		if !n.MaskedLM || !n.SentenceModel || n.Synonyms || n.Tagger != (name == "bae") {
			t.Errorf("%s needs %+v", name, n)
		}
		if _, err := rc.Build(ProtocolPaper, Resources{}); err == nil || !strings.Contains(err.Error(), "--mlm") {
			t.Errorf("%s without a masked LM: %v", name, err)
		}
		if _, err := rc.Build(ProtocolFTML, Resources{MaskedLM: lm}); err == nil {
			t.Errorf("%s under the FTML protocol built", name)
		}
		bare, err := rc.Build(ProtocolPaper, Resources{MaskedLM: lm})
		if err != nil {
			t.Fatal(err)
		}
		if d := strings.Join(bare.Deviations, "\n"); !strings.Contains(d, "USE") || !strings.Contains(d, "omitted") || !strings.Contains(d, "masked LM") {
			t.Errorf("%s deviations without an encoder: %v", name, bare.Deviations)
		}
		c, err := rc.Build(ProtocolPaper, Resources{MaskedLM: lm, Encoder: bowEncoder{}})
		if err != nil {
			t.Fatal(err)
		}
		g, ok := c.Search.(Greedy)
		sim, _ := c.Post[len(c.Post)-1].(SentenceSimilarity)
		var rate float64
		for _, p := range c.Pre {
			if m, ok := p.(MaxModificationRate); ok {
				rate = m.Rate
			}
		}
		switch name {
		case "bae":
			if !ok || g.Order != ByDelete || sim.Threshold != 0.936338023 || sim.Window != 15 || !sim.AgainstOriginal || !sim.SkipShort || rate != 0 {
				t.Errorf("bae: %s", c.Description)
			}
		case "bert-attack":
			if !ok || g.Order != ByUnk || sim.Threshold != 0.2 || sim.Window != 0 || !sim.AgainstOriginal || rate != 0.4 {
				t.Errorf("bert-attack: %s", c.Description)
			}
		}
		if !slices.ContainsFunc(c.Pre, func(p PreConstraint) bool { s, ok := p.(StopWords); return ok && s.Set.Has("the") }) {
			t.Errorf("%s: no stop words", name)
		}
		tg, _, _ := oneWord()
		r, err := c.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != Successful || !strings.HasSuffix(r.PerturbedText, "truly fine") && !strings.HasSuffix(r.PerturbedText, "truly great") {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// refuseWord is a post constraint that refuses one substitute and counts
// what it judged.
type refuseWord struct {
	word  string
	calls *int
}

func (c refuseWord) Name() string { return "refuse(" + c.word + ")" }

func (c refuseWord) Check(_, _, next []string, i int) bool {
	*c.calls++
	return next[i] != c.word
}

// Each result counts what each post constraint judged and kept, and the
// summary adds them up; a text the first refused is not judged by the
// second.
func TestPostConstraintTallies(t *testing.T) {
	tg, syn, _ := oneWord()
	var first, second int
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete},
		Post: []PostConstraint{refuseWord{"fine", &first}, refuseWord{"nice", &second}}}
	var rs []Result
	for i, text := range []string{"the movie was truly good", "good movie", "the movie was good"} {
		r, err := a.Run(tg, Example{Index: i, Text: text, Label: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	s := Summarize(rs)
	if len(s.PostPass) != 2 || s.PostPass[0].Checked != first || s.PostPass[1].Checked != second || first == 0 ||
		s.PostPass[0].Passed != s.PostPass[1].Checked || s.PostPass[1].Passed >= s.PostPass[1].Checked {
		t.Errorf("tallies %+v; the constraints were called %d and %d times", s.PostPass, first, second)
	}
}
