package attack

import (
	"fmt"
	"strings"
	"sync"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
)

// MaskedLM proposes the words a masked language model expects at a
// position of a text (mlm.Predictor implements it).
type MaskedLM interface {
	Name() string
	// Masked: word i replaced by the mask, the k most likely whole words
	// with probability ≥ minProb, most likely first (BAE).
	Masked(words []string, i, k int, minProb float64) []string
	// InPlace: the text read as it is, the k most likely words at word
	// i's pieces, sub-word aware (BERT-Attack).
	InPlace(words []string, i, k int) []string
}

// Masked-LM candidate methods.
const (
	MethodBAE        = "bae"
	MethodBERTAttack = "bert-attack"
)

// MaskedLMSwap draws substitutes from a masked language model, as
// TextAttack's WordSwapMaskedLM: BAE's (the word masked; K whole words
// with probability ≥ MinProb) or BERT-Attack's (the word read in place;
// K candidates, whole words of several pieces ranked by perplexity).
type MaskedLMSwap struct {
	LM      MaskedLM
	Method  string
	K       int
	MinProb float64 // BAE only
}

// Name implements Transformation.
func (w MaskedLMSwap) Name() string {
	return fmt.Sprintf("masked-lm-swap(%s,%s,k=%d)", w.LM.Name(), w.Method, w.K)
}

// Substitutes implements Transformation: the candidates other than the
// word itself (compared without case: the masked LMs here are uncased).
func (w MaskedLMSwap) Substitutes(words []string, i int) []string {
	var cands []string
	if w.Method == MethodBERTAttack {
		cands = w.LM.InPlace(words, i, w.K)
	} else {
		cands = w.LM.Masked(words, i, w.K, w.MinProb)
	}
	out := cands[:0]
	for _, c := range cands {
		if !strings.EqualFold(c, words[i]) {
			out = append(out, c)
		}
	}
	return out
}

// ModelEncoder is a transformer sentence encoder (all-MiniLM-L6-v2 here)
// scoring two texts by the cosine of their sentence embeddings: the
// declared stand-in for the Universal Sentence Encoder of BAE and
// BERT-Attack. It caches recent texts; it is safe for concurrent use.
type ModelEncoder struct {
	M     *model.Model
	Label string

	mu    sync.Mutex
	cache map[string][]float32
}

// NewModelEncoder wraps m, named label in descriptions.
func NewModelEncoder(m *model.Model, label string) *ModelEncoder {
	return &ModelEncoder{M: m, Label: label, cache: map[string][]float32{}}
}

// Name implements SentenceEncoder.
func (e *ModelEncoder) Name() string { return "sentence-embedding-cosine(" + e.Label + ")" }

// Similarity implements SentenceEncoder.
func (e *ModelEncoder) Similarity(a, b []string) float64 {
	va, vb := e.embed(strings.Join(a, " ")), e.embed(strings.Join(b, " "))
	c, ok := metrics.Cosine(va, vb)
	if !ok {
		return 0
	}
	return c
}

func (e *ModelEncoder) embed(s string) []float32 {
	e.mu.Lock()
	v, ok := e.cache[s]
	e.mu.Unlock()
	if ok {
		return v
	}
	vs, err := e.M.Embed([]string{s})
	if err != nil || len(vs) != 1 {
		return nil
	}
	e.mu.Lock()
	if len(e.cache) >= 4096 {
		clear(e.cache)
	}
	e.cache[s] = vs[0]
	e.mu.Unlock()
	return vs[0]
}

func needMaskedLM(r Resources, recipe string) error {
	if r.MaskedLM == nil {
		return fmt.Errorf("recipe %s needs a masked language model (--mlm DIR: a Hugging Face directory with a masked-LM head; 'mlm train-head' writes one)", recipe)
	}
	return nil
}

// sentenceConstraint is the recipe's USE check with the encoder given, or
// the deviation that says it is omitted.
func sentenceConstraint(r Resources, s SentenceSimilarity, what string) ([]PostConstraint, []string) {
	if r.Encoder == nil {
		return nil, []string{what + " omitted (no sentence encoder: give --sentence-encoder DIR)"}
	}
	s.Encoder = r.Encoder
	if isUSE(r.Encoder) {
		return []PostConstraint{s}, nil
	}
	return []PostConstraint{s}, []string{useDeviation(r.Encoder, what+" (threshold kept)")}
}

const mlmDeviation = "masked LM: the given head on all-MiniLM-L6-v2 (mlm train-head) instead of bert-base-uncased's, whose candidates are better"

func buildBAE(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML {
		return nil, fmt.Errorf("bae is not part of the FTML protocol; use --protocol flat")
	}
	if err := needMaskedLM(r, "bae"); err != nil {
		return nil, err
	}
	dev := []string{mlmDeviation,
		"whole-word filter: word pieces that continue a word, specials and punctuation are dropped (BAE's authors kept words in GloVe's vocabulary, which is not here)"}
	var post []PostConstraint
	if r.Tagger != nil {
		post = append(post, posConstraint(r.Tagger, true))
		dev = append(dev, "POS tagger: WordNet lexicon tagger instead of NLTK's perceptron tagger")
	} else {
		dev = append(dev, "part-of-speech constraint omitted (no POS tagger available)")
	}
	sim, simDev := sentenceConstraint(r, SentenceSimilarity{Threshold: 0.936338023, Window: 15, AgainstOriginal: true, SkipShort: true},
		"USE similarity ≥ 0.936338023 on 15-word windows against the original")
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: MaskedLMSwap{LM: r.MaskedLM, Method: MethodBAE, K: 50, MinProb: 5e-4},
			Pre:    []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.NLTKStopwords(), Desc: "nltk-english"}},
			Post:   append(post, sim...),
			Search: Greedy{Order: ByDelete}},
		Description: "BAE-R (Garg & Ramakrishnan 2020) as TextAttack's bae recipe: the word masked, the masked LM's top 50 whole words with probability ≥ 5e-4, POS match (noun↔verb allowed), sentence similarity, deletion importance",
		Deviations:  append(dev, simDev...),
	}, nil
}

func buildBERTAttack(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML {
		return nil, fmt.Errorf("bert-attack is not part of the FTML protocol; use --protocol flat")
	}
	if err := needMaskedLM(r, "bert-attack"); err != nil {
		return nil, err
	}
	dev := []string{mlmDeviation,
		"words of several pieces: the 48 lowest-perplexity combinations of each piece's 48 best, sorted (TextAttack builds the same list but forgets to sort it; the authors' code scores 24 combinations of 4 per piece out of context)"}
	sim, simDev := sentenceConstraint(r, SentenceSimilarity{Threshold: 0.2, AgainstOriginal: true},
		"USE cosine ≥ 0.2 on the whole text against the original")
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: MaskedLMSwap{LM: r.MaskedLM, Method: MethodBERTAttack, K: 48},
			Pre:    []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.NLTKStopwords(), Desc: "nltk-english"}, MaxModificationRate{Rate: 0.4}},
			Post:   sim,
			Search: Greedy{Order: ByUnk}},
		Description: "BERT-Attack (Li et al. 2020) as TextAttack's bert-attack recipe: the masked LM's top 48 at the word read in place (sub-word aware), at most 40 % of the words, sentence similarity, [UNK] importance",
		Deviations:  append(dev, simDev...),
	}, nil
}
