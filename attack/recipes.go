package attack

import (
	"fmt"
	"sort"
	"strings"

	"github.com/textarmor/textarmor/lexicon"
)

// Protocols an attack can be run under. "" is the paper's own recipe
// (TextAttack's, which is what FLAT uses, so "flat" is the same thing).
const (
	ProtocolPaper = ""
	ProtocolFTML  = "ftml"
	ProtocolFLAT  = "flat"
)

// Resources are the external parts recipes draw on. Nil members are
// unavailable; a recipe either works without them and lists a deviation,
// or fails with an error naming what is missing.
type Resources struct {
	// Synonyms are the counter-fitted neighbour sets (Jia et al. 2019:
	// k = 8, squared distance ≤ 0.5), restricted to the model vocabulary.
	Synonyms lexicon.Source
	// WordNet synonyms of any part of speech (PWWS).
	WordNet lexicon.Source
	// Encoder is the Universal Sentence Encoder (TextFooler, HLA).
	Encoder SentenceEncoder
	// Tagger is a universal-tagset POS tagger (TextFooler).
	Tagger Tagger
	// Distance is a word-embedding space (TextFooler: cosine ≥ 0.5 on the
	// counter-fitted vectors; IGA: the same space).
	Distance WordDistance
	// Nearest, when set, are substitutes computed from word vectors; the
	// paper-protocol textfooler, ga and pso use them instead of Synonyms.
	Nearest *NearestSet
	// LM, when set, is the language model of the alzantot recipe (the
	// paper's Google 1-billion-word LM keeps the best 4 substitutes).
	LM LanguageModel
	// MaskedLM proposes contextual candidates (BAE, BERT-Attack).
	MaskedLM MaskedLM
	// QueryBudget is copied to the attack (0 = none).
	QueryBudget int
}

// Configured is a recipe built for one protocol.
type Configured struct {
	*Attack
	Recipe      string
	Protocol    string
	Description string
	// Deviations lists every way this attack differs from the paper or
	// protocol it names (resources substituted or omitted).
	Deviations []string
}

// Recipe is a named attack composition whose defaults are its paper's.
type Recipe struct {
	Name    string
	Aliases []string
	Summary string
	build   func(protocol string, r Resources) (*Configured, error)
	needs   func(protocol string, n *Needs) // adjusts the defaults of Needs
}

// Needs says which Resources a recipe reads under a protocol, so a caller
// loads those and no others.
type Needs struct {
	// Synonyms: the counter-fitted neighbour sets, unless Nearest
	// substitutes are given instead.
	Synonyms bool
	// WordNet: WordNet synonyms (PWWS outside the FTML protocol).
	WordNet bool
	// Nearest: the recipe takes its substitutes from word vectors when
	// they are given (Resources.Nearest), else from Synonyms; NearestK and
	// NearestCos are its paper's neighbourhood: the k nearest words with
	// cosine ≥ NearestCos (TextFooler's 50 and 0.5; Alzantot's 8 with
	// squared distance ≤ 0.5, i.e. cosine ≥ 0.75 on unit vectors; TextBugger's 5
	// with any cosine, −1).
	Nearest    bool
	NearestK   int
	NearestCos float64
	// Tagger: a POS tagger (TextFooler's POS constraint).
	Tagger bool
	// Encoder: a sentence encoder for HLA's similarity (word vectors, or
	// the model's own embedding table when none are given).
	Encoder bool
	// LM: the recipe can use a language model (Alzantot's GA, not under
	// the FTML protocol).
	LM bool
	// OOV: substitutes outside the model vocabulary reach it (as UNK), so
	// tables over words must cover them too (every protocol but FTML).
	OOV bool
	// MaskedLM: a masked language model for candidates; SentenceModel: a
	// transformer sentence encoder for the USE constraint (BAE,
	// BERT-Attack).
	MaskedLM, SentenceModel bool
}

// Needs reports what the recipe reads under protocol.
func (rc Recipe) Needs(protocol string) Needs {
	n := Needs{Synonyms: true, OOV: protocol != ProtocolFTML}
	if rc.needs != nil {
		rc.needs(protocol, &n)
	}
	return n
}

// Build composes the attack for a protocol.
func (rc Recipe) Build(protocol string, r Resources) (*Configured, error) {
	switch protocol {
	case ProtocolPaper, ProtocolFTML, ProtocolFLAT:
	default:
		return nil, fmt.Errorf("attack: unknown protocol %q (valid: ftml, flat, or empty for the paper's recipe)", protocol)
	}
	c, err := rc.build(protocol, r)
	if err != nil {
		return nil, err
	}
	c.Recipe, c.Protocol = rc.Name, protocol
	c.QueryBudget = r.QueryBudget
	// TextAttack's recipes (the papers' own and the FLAT protocol) let a
	// substitute outside the model vocabulary reach the model as UNK; the
	// FTML protocol's S(w) is restricted to the vocabulary (Jia et al.).
	c.OOVAsUnk = protocol != ProtocolFTML
	if c.Description == "" {
		c.Description = rc.Summary
	}
	c.Description += " [" + c.Attack.describe() + "]"
	return c, nil
}

// Recipes lists the available recipes, sorted by name.
func Recipes() []Recipe {
	nearest := func(protocol string, n *Needs) {
		n.Nearest, n.NearestK, n.NearestCos = protocol != ProtocolFTML, 50, 0.5
	}
	rs := []Recipe{
		{Name: "pwws", Summary: "PWWS (Ren et al. 2019): greedy by softmax(UNK saliency) × best-swap score (TextAttack; gain under --protocol ftml)", build: buildPWWS,
			needs: func(protocol string, n *Needs) {
				if protocol != ProtocolFTML {
					n.Synonyms, n.WordNet = false, true
				}
			}},
		{Name: "textfooler", Summary: "TextFooler (Jin et al. 2020): greedy by deletion importance over counter-fitted neighbours", build: buildTextFooler,
			needs: func(protocol string, n *Needs) { nearest(protocol, n); n.Tagger = true }},
		{Name: "ga", Aliases: []string{"genetic", "alzantot"}, Summary: "genetic algorithm (Alzantot et al. 2018)", build: buildGA,
			needs: func(protocol string, n *Needs) {
				nearest(protocol, n)
				n.NearestK, n.NearestCos, n.LM = 8, 0.75, protocol != ProtocolFTML
			}},
		{Name: "textbugger", Summary: "TextBugger (Li et al. 2019): character bugs (space, deletion, swap, homoglyphs) and the 5 nearest words, greedy by deletion importance", build: buildTextBugger,
			needs: func(protocol string, n *Needs) {
				nearest(protocol, n)
				n.NearestK, n.NearestCos, n.SentenceModel = textBuggerK, -1, true
			}},
		{Name: "pso", Summary: "particle swarm optimisation (Zang et al. 2020)", build: buildPSO, needs: nearest},
		{Name: "hla", Summary: "hard-label attack (Maheshwary et al. 2021): random init, search-space reduction, genetic optimisation on labels only", build: buildHLA,
			needs: func(protocol string, n *Needs) { nearest(protocol, n); n.Encoder = true }},
		{Name: "bae", Aliases: []string{"bae-r"}, Summary: "BAE-R (Garg & Ramakrishnan 2020): masked-LM replacements of the masked word, greedy by deletion importance", build: buildBAE,
			needs: func(protocol string, n *Needs) {
				n.Synonyms, n.MaskedLM, n.SentenceModel, n.Tagger = false, true, true, true
			}},
		{Name: "bert-attack", Summary: "BERT-Attack (Li et al. 2020): sub-word-aware masked-LM replacements, greedy by [UNK] importance, ≤ 40 % of the words", build: buildBERTAttack,
			needs: func(protocol string, n *Needs) { n.Synonyms, n.MaskedLM, n.SentenceModel = false, true, true }},
		{Name: "iga", Aliases: []string{"improved-genetic"}, Summary: "improved genetic algorithm (Wang, Jin & He 2019)", build: buildIGA,
			needs: func(protocol string, n *Needs) { nearest(protocol, n); n.NearestCos = 0.75 }},
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].Name < rs[b].Name })
	return rs
}

// RecipeNames lists the recipe names, sorted.
func RecipeNames() []string {
	var n []string
	for _, r := range Recipes() {
		n = append(n, r.Name)
	}
	return n
}

// LookupRecipe finds a recipe by name or alias; the error lists the valid
// names.
func LookupRecipe(name string) (Recipe, error) {
	for _, r := range Recipes() {
		if r.Name == name {
			return r, nil
		}
		for _, a := range r.Aliases {
			if a == name {
				return r, nil
			}
		}
	}
	return Recipe{}, fmt.Errorf("unknown recipe %q (valid: %s)", name, strings.Join(RecipeNames(), ", "))
}

func needSynonyms(r Resources, recipe string) error {
	if r.Synonyms == nil {
		return fmt.Errorf("recipe %s needs the counter-fitted neighbour sets (--synonyms)", recipe)
	}
	return nil
}

// ftmlCommon are the FTML §9 settings shared by every attack: the synonym
// table S (k = 8, δ = 0.5, the 21 stop words excluded), ε = 0.25.
func ftmlCommon(r Resources) (Transformation, []PreConstraint) {
	return WordSwap{r.Synonyms}, []PreConstraint{
		StopWords{Set: lexicon.FTML21(), Desc: "ftml-21"},
		MaxModificationRate{Rate: 0.25},
	}
}

const ftmlSampleNote = "FTML's attack sample is NumPy seed 0's permutation of the test set; textarmor draws its own seeded permutation (same size, different examples)"

func buildPWWS(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML {
		if err := needSynonyms(r, "pwws"); err != nil {
			return nil, err
		}
		tr, pre := ftmlCommon(r)
		pre = append(pre, NoRepeat{})
		return &Configured{
			Attack:      &Attack{Goal: Untargeted{}, Transformation: tr, Pre: pre, Search: Greedy{Order: ByPWWS, ReuseBest: true, PWWSGain: true}},
			Description: "PWWS under the FTML protocol (§9): synonyms S (k=8, δ=0.5), 21 stop words, best synonym per position fixed by the initial scan, stop at 25% words substituted",
			Deviations:  []string{ftmlSampleNote},
		}, nil
	}
	if r.WordNet == nil {
		return nil, fmt.Errorf("recipe pwws needs WordNet (install wordnet-base or set WORDNET_DIR), or use --protocol ftml")
	}
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: WordSwap{r.WordNet},
			Pre:    []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.NLTKStopwords(), Desc: "nltk-english"}},
			Search: Greedy{Order: ByPWWS}},
		Description: "PWWS as TextAttack's pwws recipe: WordNet synonyms (single words), NLTK stop words, no repeat modification, greedy by weighted saliency (softmax of UNK saliency × the goal score after the best swap, as TextAttack computes it; Ren et al. write the gain)",
	}, nil
}

func buildTextFooler(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML {
		return nil, fmt.Errorf("textfooler is not part of the FTML protocol (its attacks are pwws, ga, pso, hla); use --protocol flat")
	}
	if err := needSubstitutes(r, "textfooler"); err != nil {
		return nil, err
	}
	subs, subDev := paperSubstitutes(r, 50, 0.5, "the 50 nearest with cosine ≥ 0.5",
		"substitutes: counter-fitted neighbour sets (k=8, squared distance ≤ 0.5, i.e. cosine ≥ 0.75) instead of the 50 nearest neighbours with cosine ≥ 0.5 from the full counter-fitted vectors (give --vectors)")
	dev := appendDev(nil, subDev)
	var post []PostConstraint
	if r.Distance != nil {
		post = append(post, WordEmbeddingDistance{Space: r.Distance, Max: 0.5})
	} else {
		dev = append(dev, "word-embedding cosine ≥ 0.5 not re-checked (no --vectors; the neighbour sets already imply cosine ≥ 0.75)")
	}
	if r.Tagger != nil {
		post = append(post, posConstraint(r.Tagger, true))
		if _, ok := post[len(post)-1].(POSAgreement); ok {
			dev = append(dev, "POS tagger: WordNet lexicon tagger instead of NLTK's perceptron tagger; the substitute must be able to take the original's tag (see attack.POSAgreement)")
		}
	} else {
		dev = append(dev, "part-of-speech constraint omitted (no POS tagger available)")
	}
	if r.Encoder != nil {
		post = append(post, SentenceSimilarity{Encoder: r.Encoder, Threshold: 0.840845057, Window: 15, SkipShort: true})
		if !isUSE(r.Encoder) {
			dev = append(dev, useDeviation(r.Encoder, "the sentence-similarity constraint (threshold 0.840845057 kept)"))
		}
	} else {
		dev = append(dev, "USE sentence-similarity constraint (≥ 0.840845057, 15-word window) omitted (no sentence encoder available)")
	}
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: WordSwap{subs},
			Pre:    []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.TextFooler(), Desc: "textfooler-266"}},
			Post:   post,
			Search: Greedy{Order: ByDelete}},
		Description: "TextFooler as TextAttack's textfooler recipe: deletion importance, TextFooler stop words, no repeat modification, best-scoring substitute per position",
		Deviations:  dev,
	}, nil
}

func buildGA(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML || r.Nearest == nil {
		if err := needSynonyms(r, "ga"); err != nil {
			return nil, err
		}
	}
	if protocol == ProtocolFTML {
		tr, pre := ftmlCommon(r)
		return &Configured{
			Attack:      &Attack{Goal: Untargeted{}, Transformation: tr, Pre: pre, Search: Genetic{PopSize: 60, Generations: 40, Temp: 0.3, MaxSynonyms: 10}},
			Description: "GA under the FTML protocol (§9): population 60, 40 generations, synonyms S, no language model, success only with ≤ 25% words substituted",
			Deviations:  []string{ftmlSampleNote},
		}, nil
	}
	var post []PostConstraint
	dev := []string{"Google 1-billion-words language-model filter omitted (no LM given)"}
	if r.LM != nil {
		post = []PostConstraint{LMTopN{LM: r.LM, N: 4}}
		dev[0] = "language model: " + r.LM.Name() + " instead of the Google 1-billion-words LM (best 4 substitutes per position kept, as in the paper)"
	}
	subs, subDev := paperSubstitutes(r, 8, 0.75, "the 8 nearest with squared distance ≤ 0.5 (cosine ≥ 0.75 for unit vectors)",
		"word-embedding distance ≤ 0.5 enforced by the neighbour sets themselves (built with squared distance ≤ 0.5), not re-checked")
	if r.Nearest != nil && subDev == "" {
		subDev = "squared distance ≤ 0.5 applied as cosine ≥ 0.75 (the same for unit vectors such as the counter-fitted ones)"
	}
	dev = appendDev(dev, subDev)
	dev = append(dev, "stop words: the TextFooler list")
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: WordSwap{subs},
			Pre: []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.TextFooler(), Desc: "textfooler-266"},
				MaxModificationRate{Rate: 0.2, MinWords: 1, Ceil: true}},
			Post:   post,
			Search: Genetic{PopSize: 60, Generations: 20, Temp: 0.3, MaxSynonyms: 10}},
		Description: "GA as TextAttack's alzantot recipe: 8 nearest counter-fitted neighbours, no repeat, stop words, ≤ 20% words, population 60, 20 generations",
		Deviations:  dev,
	}, nil
}

func buildPSO(protocol string, r Resources) (*Configured, error) {
	if protocol == ProtocolFTML || r.Nearest == nil {
		if err := needSynonyms(r, "pso"); err != nil {
			return nil, err
		}
	}
	pso := PSO{PopSize: 60, Iterations: 40, Omega1: 0.8, Omega2: 0.2, C1: 0.8, C2: 0.2, VMax: 3, MaxSynonyms: 10}
	if protocol == ProtocolFTML {
		tr, pre := ftmlCommon(r)
		return &Configured{
			Attack:      &Attack{Goal: Untargeted{}, Transformation: tr, Pre: pre, Search: pso},
			Description: "PSO under the FTML protocol (§9): swarm 60, 40 iterations, synonyms S (not HowNet), success only with ≤ 25% words substituted",
			Deviations:  []string{ftmlSampleNote},
		}, nil
	}
	pso.Iterations = 20
	var subs lexicon.Source = r.Synonyms
	subDev := "substitutes: counter-fitted neighbour sets instead of HowNet sememes (HowNet unavailable)"
	if r.Nearest != nil {
		subs = r.Nearest.Source
		subDev = "substitutes: " + r.Nearest.String() + " instead of HowNet sememes (HowNet unavailable)"
	}
	return &Configured{
		Attack: &Attack{Goal: Untargeted{}, Transformation: WordSwap{subs},
			Pre:    []PreConstraint{NoRepeat{}, StopWords{Set: lexicon.TextFooler(), Desc: "textfooler-266"}},
			Search: pso},
		Description: "PSO as TextAttack's pso recipe: swarm 60, 20 iterations, no repeat, stop words",
		Deviations:  []string{subDev, "stop words: the TextFooler list"},
	}, nil
}
