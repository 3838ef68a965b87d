package attack

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/lexicon"
)

// A part spec names a goal, transformation, constraint or search with
// optional parameters, as on TextAttack's command line:
// "name" or "name:key=value,key=value". A list value uses "|"
// ("protect:words=not|no").

type spec struct {
	name   string
	params map[string]string
	used   map[string]bool
}

func parseSpec(s string) (*spec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	sp := &spec{name: strings.TrimSpace(name), params: map[string]string{}, used: map[string]bool{}}
	if sp.name == "" {
		return nil, fmt.Errorf("empty part name in %q", s)
	}
	if strings.TrimSpace(rest) == "" {
		return sp, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: parameter %q: want key=value", sp.name, kv)
		}
		if _, dup := sp.params[k]; dup {
			return nil, fmt.Errorf("%s: parameter %s given twice", sp.name, k)
		}
		sp.params[k] = v
	}
	return sp, nil
}

func (sp *spec) str(key, def string) string {
	sp.used[key] = true
	if v, ok := sp.params[key]; ok {
		return v
	}
	return def
}

func (sp *spec) int(key string, def int, err *error) int {
	v := sp.str(key, "")
	if v == "" {
		return def
	}
	n, e := strconv.Atoi(v)
	if e != nil && *err == nil {
		*err = fmt.Errorf("%s: %s=%q is not a whole number", sp.name, key, v)
	}
	return n
}

// maxCount bounds sizes and steps (a population of 1e8 or a beam of 1e6
// ran out of memory instead of failing).
const maxCount = 100000

// count is int for a value that must be at least 1 (sizes, steps), at most
// maxCount.
func (sp *spec) count(key string, def int, err *error) int {
	n := sp.int(key, def, err)
	if (n < 1 || n > maxCount) && *err == nil {
		*err = fmt.Errorf("%s: %s=%d must be in [1, %d]", sp.name, key, n, maxCount)
	}
	return n
}

func (sp *spec) float(key string, def float64, err *error) float64 {
	v := sp.str(key, "")
	if v == "" {
		return def
	}
	f, e := strconv.ParseFloat(v, 64)
	if (e != nil || math.IsNaN(f) || math.IsInf(f, 0)) && *err == nil {
		*err = fmt.Errorf("%s: %s=%q is not a finite number", sp.name, key, v)
	}
	return f
}

// done reports a parse error, or a parameter the part does not take.
func (sp *spec) done(err error) error {
	if err != nil {
		return err
	}
	var bad, valid []string
	for k := range sp.params {
		if !sp.used[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	for k := range sp.used {
		valid = append(valid, k)
	}
	sort.Strings(bad)
	sort.Strings(valid)
	if len(valid) == 0 {
		return fmt.Errorf("%s takes no parameters (got %s)", sp.name, strings.Join(bad, ", "))
	}
	return fmt.Errorf("%s: unknown parameter %s (valid: %s)", sp.name, strings.Join(bad, ", "), strings.Join(valid, ", "))
}

func unknown(kind, name string, valid []string) error {
	return fmt.Errorf("unknown %s %q (valid: %s)", kind, name, strings.Join(valid, ", "))
}

// GoalNames, TransformationNames, ConstraintNames and SearchNames list
// what ParseGoal, ParseTransformation, ParseConstraint and ParseSearch
// accept.
var (
	GoalNames           = []string{"untargeted", "targeted", "hard-label"}
	TransformationNames = []string{"synonyms", "wordnet", "nearest"}
	ConstraintNames     = []string{"repeat", "stopwords", "max-rate", "min-length", "protect", "embedding", "pos", "use", "lm-top"}
	SearchNames         = []string{"greedy", "beam", "genetic", "pso", "iga", "hla"}
)

// ParseGoal reads "untargeted", "targeted:class=N" or "hard-label".
func ParseGoal(s string) (Goal, error) {
	sp, err := parseSpec(s)
	if err != nil {
		return nil, err
	}
	var g Goal
	switch sp.name {
	case "untargeted":
		g = Untargeted{}
	case "targeted":
		c := sp.int("class", -1, &err)
		if err == nil && c < 0 {
			err = fmt.Errorf("targeted: give the target class as targeted:class=N")
		}
		g = Targeted{Class: c}
	case "hard-label":
		g = HardLabel{}
	default:
		return nil, unknown("goal", sp.name, GoalNames)
	}
	return g, sp.done(err)
}

// ParseTransformation reads a word-swap source: "synonyms" (the
// counter-fitted neighbour sets), "wordnet" or "nearest" (the nearest
// neighbours of word vectors).
func ParseTransformation(s string, r Resources) (Transformation, error) {
	sp, err := parseSpec(s)
	if err != nil {
		return nil, err
	}
	var src lexicon.Source
	switch sp.name {
	case "synonyms":
		if src = r.Synonyms; src == nil {
			return nil, fmt.Errorf("transformation synonyms needs the counter-fitted neighbour sets (--synonyms or --data)")
		}
	case "wordnet":
		if src = r.WordNet; src == nil {
			return nil, fmt.Errorf("transformation wordnet needs WordNet (--wordnet)")
		}
	case "nearest":
		if r.Nearest == nil {
			return nil, fmt.Errorf("transformation nearest needs word vectors (--vectors)")
		}
		src = r.Nearest.Source
	default:
		return nil, unknown("transformation", sp.name, TransformationNames)
	}
	return WordSwap{src}, sp.done(nil)
}

// ParseConstraint reads one constraint; exactly one of pre and post is set.
//
//	repeat                          no position changes twice
//	stopwords:list=textfooler       textfooler (266 words), ftml (21) or nltk (179)
//	max-rate:rate=0.25              at most this share of the words changes
//	min-length:min=3                words shorter than this never change
//	protect:words=not|no            these words never change
//	embedding:max=0.5               word-vector cosine distance to the original ≤ max (--vectors)
//	pos                             the substitute can take the original's part of speech (WordNet)
//	use:min=0.8408,window=15        sentence similarity ≥ min (the --vectors stand-in for USE)
//	lm-top:n=4                      the n substitutes a language model scores best (--lm)
func ParseConstraint(s string, r Resources) (pre PreConstraint, post PostConstraint, err error) {
	sp, err := parseSpec(s)
	if err != nil {
		return nil, nil, err
	}
	switch sp.name {
	case "repeat":
		pre = NoRepeat{}
	case "stopwords":
		switch l := sp.str("list", "textfooler"); l {
		case "textfooler":
			pre = StopWords{Set: lexicon.TextFooler(), Desc: "textfooler-266"}
		case "ftml":
			pre = StopWords{Set: lexicon.FTML21(), Desc: "ftml-21"}
		case "nltk":
			pre = StopWords{Set: lexicon.NLTKStopwords(), Desc: "nltk-179"}
		default:
			err = fmt.Errorf("stopwords: list=%q (valid: textfooler, ftml, nltk)", l)
		}
	case "max-rate":
		rate := sp.float("rate", 0.25, &err)
		if err == nil && (rate <= 0 || rate > 1) {
			err = fmt.Errorf("max-rate: rate=%g must be in (0, 1]", rate)
		}
		pre = MaxModificationRate{Rate: rate}
	case "min-length":
		pre = MinWordLength{Min: sp.count("min", 3, &err)}
	case "protect":
		words := map[string]bool{}
		for _, w := range strings.Split(sp.str("words", ""), "|") {
			if w = strings.TrimSpace(w); w != "" {
				words[w] = true
			}
		}
		if len(words) == 0 && err == nil {
			err = fmt.Errorf("protect: give the words as protect:words=w1|w2")
		}
		pre = Protected{Words: words}
	case "embedding":
		maxD := sp.float("max", 0.5, &err)
		if r.Distance == nil && err == nil {
			err = fmt.Errorf("constraint embedding needs word vectors (--vectors)")
		}
		post = WordEmbeddingDistance{Space: r.Distance, Max: maxD}
	case "pos":
		if r.Tagger == nil {
			err = fmt.Errorf("constraint pos needs WordNet (--wordnet) for its tagger")
		}
		post = posConstraint(r.Tagger, true) // as textfooler uses it
	case "use":
		th := sp.float("min", 0.840845057, &err)
		w := sp.int("window", 15, &err)
		if r.Encoder == nil && err == nil {
			err = fmt.Errorf("constraint use needs a sentence encoder: its stand-in is built from word vectors (--vectors)")
		}
		post = SentenceSimilarity{Encoder: r.Encoder, Threshold: th, Window: w, SkipShort: true}
	case "lm-top":
		n := sp.count("n", 4, &err)
		if r.LM == nil && err == nil {
			err = fmt.Errorf("constraint lm-top needs a language model (--lm)")
		}
		post = LMTopN{LM: r.LM, N: n}
	default:
		return nil, nil, unknown("constraint", sp.name, ConstraintNames)
	}
	if err = sp.done(err); err != nil {
		return nil, nil, err
	}
	return pre, post, nil
}

// ParseSearch reads a search method with its papers' defaults:
//
//	greedy:order=delete             word importance by delete, unk, pwws, gradient or random
//	beam:width=4                    beam search (width 1: TextAttack's greedy search)
//	genetic:pop=60,gens=20          Alzantot et al.
//	pso:pop=60,iters=20             Zang et al.
//	iga:pop=60,gens=20,max-replace=5
//	hla:pop=30,gens=100,init=2500   hard-label (needs a sentence encoder: --vectors)
func ParseSearch(s string, r Resources) (Search, error) {
	sp, err := parseSpec(s)
	if err != nil {
		return nil, err
	}
	var out Search
	switch sp.name {
	case "greedy":
		orders := map[string]Order{"delete": ByDelete, "unk": ByUnk, "pwws": ByPWWS, "random": ByRandom, "gradient": ByGradient}
		o, ok := orders[sp.str("order", "delete")]
		if !ok {
			err = fmt.Errorf("greedy: order=%q (valid: delete, unk, pwws, gradient, random)", sp.params["order"])
		}
		out = Greedy{Order: o}
	case "beam":
		out = Beam{Width: sp.count("width", 4, &err)}
	case "genetic":
		out = Genetic{PopSize: sp.count("pop", 60, &err), Generations: sp.count("gens", 20, &err), Temp: sp.float("temp", 0.3, &err), MaxSynonyms: 10}
	case "pso":
		out = PSO{PopSize: sp.count("pop", 60, &err), Iterations: sp.count("iters", 20, &err), Omega1: 0.8, Omega2: 0.2, C1: 0.8, C2: 0.2, VMax: 3, MaxSynonyms: 10}
	case "iga":
		out = IGA{PopSize: sp.count("pop", 60, &err), Generations: sp.count("gens", 20, &err), Temp: 0.3, MaxReplace: sp.count("max-replace", 5, &err)}
	case "hla":
		if r.Encoder == nil {
			return nil, fmt.Errorf("search hla needs a sentence encoder: its stand-in is built from word vectors (--vectors)")
		}
		h := DefaultHLA(r.Encoder)
		h.PopSize, h.Generations, h.InitQueries = sp.count("pop", h.PopSize, &err), sp.count("gens", h.Generations, &err), sp.count("init", h.InitQueries, &err)
		out = h
	default:
		return nil, unknown("search", sp.name, SearchNames)
	}
	if err = sp.done(err); err != nil {
		return nil, err
	}
	return out, nil
}

// Parts replace parts of a recipe, or make an attack without one; each is a
// spec for ParseGoal, ParseTransformation, ParseSearch or ParseConstraint
// ("" keeps the recipe's).
type Parts struct {
	Goal, Transformation, Search string
	// Constraints are added to the recipe's (or, with DropConstraints, used
	// instead of them).
	Constraints     []string
	DropConstraints bool
}

// Empty reports whether no part is given.
func (p Parts) Empty() bool {
	return p.Goal == "" && p.Transformation == "" && p.Search == "" && len(p.Constraints) == 0 && !p.DropConstraints
}

// Compose applies parts to base, a recipe built for protocol; a nil base is
// a custom attack (untargeted goal, no constraints), which needs a
// transformation and a search. The result is a new attack (base is not
// changed), described part by part; when base is a recipe, its deviations
// say which parts were replaced, since the result is no longer the paper's.
func Compose(base *Configured, protocol string, p Parts, r Resources) (*Configured, error) {
	out := &Configured{Attack: &Attack{Goal: Untargeted{}, QueryBudget: r.QueryBudget, OOVAsUnk: protocol != ProtocolFTML},
		Recipe: "custom", Protocol: protocol, Description: "custom attack"}
	var changed []string
	if base != nil {
		a := *base.Attack
		a.Pre, a.Post = append([]PreConstraint(nil), a.Pre...), append([]PostConstraint(nil), a.Post...)
		out.Attack, out.Recipe = &a, base.Recipe+"+parts"
		out.Description = base.Recipe + " recipe with parts replaced"
		out.Deviations = append([]string(nil), base.Deviations...)
	}
	a := out.Attack
	var err error
	if p.Goal != "" {
		if a.Goal, err = ParseGoal(p.Goal); err != nil {
			return nil, err
		}
		changed = append(changed, "goal "+a.Goal.Name())
	}
	if p.Transformation != "" {
		if a.Transformation, err = ParseTransformation(p.Transformation, r); err != nil {
			return nil, err
		}
		changed = append(changed, "transformation "+a.Transformation.Name())
	}
	if p.Search != "" {
		if a.Search, err = ParseSearch(p.Search, r); err != nil {
			return nil, err
		}
		changed = append(changed, "search "+a.Search.Name())
	}
	if p.DropConstraints {
		a.Pre, a.Post = nil, nil
		changed = append(changed, "no recipe constraints")
	}
	for _, c := range p.Constraints {
		pre, post, err := ParseConstraint(c, r)
		if err != nil {
			return nil, err
		}
		if pre != nil {
			a.Pre = append(a.Pre, pre)
			changed = append(changed, "constraint "+pre.Name())
		} else {
			a.Post = append(a.Post, post)
			changed = append(changed, "constraint "+post.Name())
		}
	}
	if base == nil && (a.Transformation == nil || a.Search == nil) {
		return nil, fmt.Errorf("an attack without a recipe needs a transformation (%s) and a search (%s)",
			strings.Join(TransformationNames, ", "), strings.Join(SearchNames, ", "))
	}
	if base != nil && len(changed) > 0 {
		out.Deviations = append(out.Deviations, "not the "+base.Recipe+" recipe: "+strings.Join(changed, "; "))
	}
	out.Description += " [" + a.describe() + "]"
	return out, nil
}
