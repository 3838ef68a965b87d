package attack

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// bowEncoder is a vocabulary-free sentence encoder for tests: cosine of
// word-count vectors.
type bowEncoder struct{}

func (bowEncoder) Name() string { return "bow-cosine" }

func (bowEncoder) Similarity(a, b []string) float64 {
	ca, cb := map[string]float64{}, map[string]float64{}
	for _, w := range a {
		ca[w]++
	}
	for _, w := range b {
		cb[w]++
	}
	var dot, na, nb float64
	for w, x := range ca {
		dot += x * cb[w]
		na += x * x
	}
	for _, y := range cb {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// labelsOnly hides a victim's probabilities: it returns one-hot labels, so
// an attack that succeeds through it used nothing but labels.
type labelsOnly struct{ v Victim }

func (l labelsOnly) Predict(seqs [][]int32) [][]float32 {
	out := l.v.Predict(seqs)
	for _, p := range out {
		b := nn.Argmax(p)
		for j := range p {
			p[j] = 0
		}
		p[b] = 1
	}
	return out
}

func TestHLAHardLabelEndsWithOneSubstitution(t *testing.T) {
	tg, syn, _ := oneWord()
	tg.Victim = labelsOnly{tg.Victim}
	// Every content word is swappable; only "good" decides the label.
	txt := "movie truly good movie truly movie truly movie"
	for seed := int64(0); seed < 10; seed++ {
		a := &Attack{Goal: HardLabel{}, Transformation: WordSwap{syn},
			Pre: []PreConstraint{StopWords{Set: lexicon.FTML21()}, MaxModificationRate{Rate: 0.25}}, Search: DefaultHLA(bowEncoder{})}
		r, err := a.Run(tg, Example{Index: int(seed), Text: txt, Label: 1}, seed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != Successful || r.NumPerturbed != 1 || r.PerturbedOutput != 0 {
			t.Fatalf("seed %d: %+v", seed, r)
		}
		if !strings.Contains(r.PerturbedText, " fine ") && !strings.Contains(r.PerturbedText, " nice ") ||
			strings.Contains(r.PerturbedText, "film") || strings.Contains(r.PerturbedText, "really") {
			t.Fatalf("seed %d: %q", seed, r.PerturbedText)
		}
	}
}

func TestHLAReductionKeepsNeededWords(t *testing.T) {
	// Two words must both change: reduction must stop at two.
	tg, syn, m := oneWord()
	m.w = map[int32]float64{tg.Vocab.ID("good"): 3, tg.Vocab.ID("truly"): 3}
	m.bias = -2
	tg.Victim = labelsOnly{m}
	a := &Attack{Goal: HardLabel{}, Transformation: WordSwap{syn}, Search: DefaultHLA(bowEncoder{})}
	r, err := a.Run(tg, Example{Text: "movie was truly good movie", Label: 1}, 4)
	if err != nil || r.Type != Successful || r.NumPerturbed != 2 || strings.Contains(r.PerturbedText, "film") {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestIGAReplacesSubstitutedPositions(t *testing.T) {
	// "good" → "fine" lowers p(positive) a little, "fine" → "nice" (a second
	// replacement at the same position) is needed to flip it: IGA may
	// replace a substituted word, which Genetic's NoRepeat-style perturbation
	// cannot; with MaxReplace 1 it fails.
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "movie", "was", "good", "fine", "nice"})
	m := &linear{w: map[int32]float64{vocab.ID("good"): 3, vocab.ID("fine"): 2, vocab.ID("nice"): -1}, bias: -1}
	syn := lexicon.NewNeighbors("test")
	syn.Set("good", []string{"fine"})
	syn.Set("fine", []string{"nice"})
	tg := Target{Victim: m, Vocab: vocab, Tok: text.NewWhitespace()}
	// The static candidate list is the original word's: give "good" both.
	syn.Set("good", []string{"fine", "nice"})
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: IGA{PopSize: 60, Generations: 20, Temp: 0.3, MaxReplace: 5}}
	r, err := a.Run(tg, Example{Text: "movie was good", Label: 1}, 0)
	if err != nil || r.Type != Successful || r.PerturbedText != "movie was nice" {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestMeanVectorEncoderAndCosineDistance(t *testing.T) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "fine", "bad", "movie"})
	tab := text.TableVectors("test", vocab, 2, []float32{0, 0, 0, 0, 1, 0, 0.9, 0.1, -1, 0, 0, 1})
	e := MeanVectorEncoder{Table: tab}
	if s := e.Similarity([]string{"good", "movie"}, []string{"good", "movie"}); math.Abs(s-1) > 1e-9 {
		t.Fatalf("identical: %g", s)
	}
	syn := e.Similarity([]string{"good", "movie"}, []string{"fine", "movie"})
	ant := e.Similarity([]string{"good", "movie"}, []string{"bad", "movie"})
	if !(syn > 0.99 && ant < 0.1) {
		t.Fatalf("synonym %g antonym %g", syn, ant)
	}
	if s := e.Similarity([]string{"zzz"}, []string{"yyy"}); s != 0 {
		t.Fatalf("unknown words: %g", s)
	}
	d := CosineDistance{Table: tab}
	if x, ok := d.Distance("good", "bad"); !ok || math.Abs(x-2) > 1e-9 {
		t.Fatalf("good/bad: %g %v", x, ok)
	}
	if _, ok := d.Distance("good", "zzz"); ok {
		t.Fatal("unknown word accepted")
	}
	c := WordEmbeddingDistance{Space: d, Max: 0.5}
	if !c.Check([]string{"good"}, []string{"good"}, []string{"fine"}, 0) || c.Check([]string{"good"}, []string{"good"}, []string{"bad"}, 0) {
		t.Fatal("cosine ≥ 0.5 constraint")
	}
}

func openTestWordNet(t *testing.T) *lexicon.WordNet {
	dir := lexicon.DefaultWordNetDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("WordNet not installed (%s)", dir)
	}
	wn, err := lexicon.OpenWordNet(dir)
	if err != nil {
		t.Skipf("WordNet: %v", err)
	}
	return wn
}

// POSAgreement asks whether the substitute can take the tag the original
// word has in context; noun↔verb swaps pass when allowed.
func TestPOSAgreement(t *testing.T) {
	tg := lexicon.POSTagger{WN: openTestWordNet(t)}
	pos := POSAgreement{Tagger: tg, AllowNounVerb: true}
	prev := strings.Fields("a good movie")
	for sub, want := range map[string]bool{"fine": true, "decent": true, "quickly": false, "the": false} {
		next := append([]string(nil), prev...)
		next[1] = sub
		if got := pos.Check(prev, prev, next, 1); got != want {
			t.Errorf("good→%s: %v, want %v", sub, got, want)
		}
	}
	// Noun↔verb swaps are allowed (TextFooler).
	prev = strings.Fields("the film was long")
	next := strings.Fields("the shoot was long")
	if !pos.Check(prev, prev, next, 1) {
		t.Error("film→shoot (noun/verb) rejected")
	}
}

func TestNewRecipes(t *testing.T) {
	_, syn, _ := oneWord()
	rc, err := LookupRecipe("hla")
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []string{ProtocolPaper, ProtocolFTML} {
		c, err := rc.Build(proto, Resources{Synonyms: syn, Encoder: bowEncoder{}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(c.Deviations, "\n"), "USE replaced by bow-cosine") {
			t.Fatalf("hla %q deviations: %v", proto, c.Deviations)
		}
		if _, ok := c.Goal.(HardLabel); !ok {
			t.Fatalf("hla goal %T", c.Goal)
		}
	}
	rc, err = LookupRecipe("iga")
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []string{ProtocolPaper, ProtocolFTML, ProtocolFLAT} {
		if c, err := rc.Build(proto, Resources{Synonyms: syn}); err != nil || len(c.Deviations) == 0 {
			t.Fatalf("iga %q: %v", proto, err)
		}
	}
	rc, _ = LookupRecipe("textfooler")
	c, err := rc.Build(ProtocolFLAT, Resources{Synonyms: syn, Encoder: bowEncoder{}, Tagger: lexicon.POSTagger{}, Distance: CosineDistance{Table: &text.Vectors{Name: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Post) != 3 || !strings.Contains(strings.Join(c.Deviations, "\n"), "USE replaced by") {
		t.Fatalf("textfooler: %d post constraints, deviations %v", len(c.Post), c.Deviations)
	}
}

// hlaInitOnly runs only HLA's random initialisation.
type hlaInitOnly struct{ h HLA }

func (i hlaInitOnly) Name() string { return "hla-init" }

func (i hlaInitOnly) Search(s *State) Scored {
	r, ok := i.h.initialise(s)
	if !ok {
		return s.Initial
	}
	return r
}

// The batched initialisation must return the first flipping candidate in
// drawing order: with a label that flips once three words are replaced,
// stage 1 ends at exactly three substitutions, although its batch goes on.
func TestHLAInitialisationReturnsFirstFlipInBatch(t *testing.T) {
	tg, syn, m := oneWord()
	m.w = map[int32]float64{tg.Vocab.ID("good"): 1}
	m.bias = -37.5
	txt := strings.TrimSpace(strings.Repeat("good ", 40))
	for seed := int64(0); seed < 5; seed++ {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: hlaInitOnly{DefaultHLA(bowEncoder{})}}
		r, err := a.Run(tg, Example{Index: int(seed), Text: txt, Label: 1}, seed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != Successful || r.NumPerturbed != 3 {
			t.Fatalf("seed %d: %s, %d perturbed, want a success with 3", seed, r.Type, r.NumPerturbed)
		}
		// One batch: the 32 prefixes, all counted.
		if r.NumQueries != 1+hlaInitBatch {
			t.Errorf("seed %d: %d queries, want 1 + %d", seed, r.NumQueries, hlaInitBatch)
		}
	}
}
