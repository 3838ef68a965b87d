package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/langmodel"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
)

// attackInputs are the resources an attack is assembled from, as the CLI
// gives them.
type attackInputs struct {
	synPath  string // counter-fitted neighbour JSON ("" = the one under dataDir)
	dataDir  string
	wnDir    string // WordNet dict folder
	vecPath  string // word vectors (optional)
	lmPath   string // language model (optional; ga without the FTML protocol)
	budget   int    // query budget per example (0 = none)
	nf       nearestFlags
	cacheDir string // where nearest-neighbour tables are cached
}

// attackSetup builds recipe rc under protocol against m with the CLI's
// resources: the counter-fitted neighbour sets (in.synPath, default under
// in.dataDir) for everything but WordNet-PWWS, WordNet for PWWS, and the
// optional extras of attackExtras (word vectors, nearest-neighbour
// substitutes, POS tagger). `attack` and `train --defense flat|adv` share it.
func attackSetup(rc attack.Recipe, protocol string, m *model.Model, in attackInputs, stderr io.Writer) (*attack.Configured, error) {
	var res attack.Resources
	res.QueryBudget = in.budget
	need := rc.Needs(protocol)
	if err := attackExtras(&res, need, m, in.vecPath, in.wnDir, in.nf, in.cacheDir, stderr); err != nil {
		return nil, err
	}
	if in.lmPath != "" {
		// Only Alzantot's GA has a language model, and the FTML protocol
		// runs it without one (ftml.md §9).
		if !need.LM {
			return nil, usageError{fmt.Errorf("--lm is used only by --recipe ga (alzantot) without --protocol ftml")}
		}
		lm, err := langmodel.Load(in.lmPath)
		if err != nil {
			return nil, fmt.Errorf("--lm: %w", err)
		}
		res.LM = lm
	}
	var err error
	switch {
	case res.Nearest == nil && need.Synonyms:
		if res.Synonyms, err = attackSynonyms(in, protocol, m); err != nil {
			return nil, err
		}
	case need.WordNet:
		wn, err := lexicon.OpenWordNet(in.wnDir)
		if err != nil {
			return nil, fmt.Errorf("pwws needs WordNet: %w (give --wordnet DIR, or use --protocol ftml)", err)
		}
		res.WordNet = wn.Source(lexicon.Any)
	}
	cfg, err := rc.Build(protocol, res)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// attackSynonyms loads the counter-fitted neighbour sets (in.synPath,
// default under in.dataDir). The FTML protocol's S(w) lives in the model
// vocabulary (Jia et al.); TextAttack's recipes keep every neighbour, and
// those outside the vocabulary reach the model as UNK
// (attack.Attack.OOVAsUnk).
func attackSynonyms(in attackInputs, protocol string, m *model.Model) (lexicon.Source, error) {
	synPath := in.synPath
	if synPath == "" {
		dir, err := dataDirFor(in.dataDir, "the default synonym table (no --synonyms)")
		if err != nil {
			return nil, err
		}
		synPath = defaultSynonyms(dir)
	}
	nb, err := lexicon.LoadNeighbors(synPath)
	if err != nil {
		return nil, fmt.Errorf("synonyms: %w (give --synonyms PATH or --data DIR)", err)
	}
	if protocol == attack.ProtocolFTML {
		nb = nb.Restrict(m.Vocab)
	}
	// A table without a single neighbour attacks nothing: every example
	// would "fail" and the accuracy under attack be the clean accuracy.
	if nb.Edges() == 0 {
		return nil, fmt.Errorf("synonyms: %s gives no word a neighbour%s; check the file", synPath,
			map[bool]string{true: " in the model's vocabulary (protocol ftml)"}[protocol == attack.ProtocolFTML])
	}
	return nb, nil
}

// partName is the name of a part spec ("genetic:pop=30" → "genetic").
func partName(spec string) string {
	n, _, _ := strings.Cut(spec, ":")
	return strings.TrimSpace(n)
}

// partsUseLM reports whether a constraint of p needs the language model.
func partsUseLM(p attack.Parts) bool {
	return slices.ContainsFunc(p.Constraints, func(c string) bool { return partName(c) == "lm-top" })
}

// partResources loads what the parts of a composed attack name: the
// neighbour sets or WordNet for the transformation; word vectors for
// nearest substitutes, the embedding and sentence-similarity constraints
// and HLA; the tagger for pos; the language model for lm-top.
func partResources(p attack.Parts, protocol string, m *model.Model, in attackInputs, stderr io.Writer) (attack.Resources, error) {
	res := attack.Resources{QueryBudget: in.budget}
	need := attack.Needs{Nearest: partName(p.Transformation) == "nearest", Encoder: partName(p.Search) == "hla",
		Tagger: slices.ContainsFunc(p.Constraints, func(c string) bool { return partName(c) == "pos" }),
		OOV:    protocol != attack.ProtocolFTML}
	if err := attackExtras(&res, need, m, in.vecPath, in.wnDir, in.nf, in.cacheDir, stderr); err != nil {
		return res, err
	}
	var err error
	switch partName(p.Transformation) {
	case "synonyms":
		if res.Synonyms, err = attackSynonyms(in, protocol, m); err != nil {
			return res, err
		}
	case "wordnet":
		wn, err := lexicon.OpenWordNet(in.wnDir)
		if err != nil {
			return res, fmt.Errorf("transformation wordnet: %w (give --wordnet DIR)", err)
		}
		res.WordNet = wn.Source(lexicon.Any)
	}
	if partsUseLM(p) && in.lmPath != "" {
		lm, err := langmodel.Load(in.lmPath)
		if err != nil {
			return res, fmt.Errorf("--lm: %w", err)
		}
		res.LM = lm
	}
	return res, nil
}

// specList is a repeatable flag.
type specList []string

func (l *specList) String() string     { return strings.Join(*l, " ") }
func (l *specList) Set(s string) error { *l = append(*l, s); return nil }
