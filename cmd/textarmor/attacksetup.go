package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/attack"
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
// resources (attack.LoadResources reads those the recipe's Needs name).
// `attack` and `train --defense flat|adv` share it.
func attackSetup(rc attack.Recipe, protocol string, m *model.Model, in attackInputs, stderr io.Writer) (*attack.Configured, error) {
	need := rc.Needs(protocol)
	if in.lmPath != "" && !need.LM {
		// Only Alzantot's GA has a language model, and the FTML protocol
		// runs it without one (ftml.md §9).
		return nil, usageError{fmt.Errorf("--lm is used only by --recipe ga (alzantot) without --protocol ftml")}
	}
	res, err := loadResources(need, m, in, stderr)
	var re *attack.ResourceError
	if errors.As(err, &re) && re.Resource == "wordnet" {
		return nil, fmt.Errorf("%s needs WordNet: %w (give --wordnet DIR, or use --protocol ftml)", rc.Name, re.Err)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := rc.Build(protocol, res)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// loadResources is attack.LoadResources with the CLI's paths: the default
// synonym table under the data folder, and hints naming the flags.
func loadResources(need attack.Needs, m *model.Model, in attackInputs, stderr io.Writer) (attack.Resources, error) {
	files := attack.ResourceFiles{Synonyms: in.synPath, WordNet: in.wnDir, Vectors: in.vecPath, LM: in.lmPath,
		NearestK: in.nf.k, NearestCos: in.nf.cos, NearestVocab: in.nf.vocab, CacheDir: in.cacheDir, QueryBudget: in.budget, Log: stderr,
		DefaultSynonyms: func() (string, error) { return defaultSynonyms(in.dataDir) }}
	res, err := attack.LoadResources(need, m, files)
	var re *attack.ResourceError
	if !errors.As(err, &re) {
		return res, err
	}
	switch {
	case re.Resource == "synonyms" && !re.Empty:
		return res, fmt.Errorf("%w (give --synonyms PATH or --data DIR)", err)
	case re.Resource == "vectors", re.Resource == "lm":
		return res, fmt.Errorf("--%w", err)
	case re.Resource == "encoder":
		return res, usageError{fmt.Errorf("%v (give --vectors)", re.Err)}
	}
	return res, err
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
	tr := partName(p.Transformation)
	need := attack.Needs{Synonyms: tr == "synonyms", WordNet: tr == "wordnet", Nearest: tr == "nearest",
		Encoder: partName(p.Search) == "hla", LM: partsUseLM(p), OOV: protocol != attack.ProtocolFTML,
		Tagger: slices.ContainsFunc(p.Constraints, func(c string) bool { return partName(c) == "pos" })}
	res, err := loadResources(need, m, in, stderr)
	var re *attack.ResourceError
	if errors.As(err, &re) && re.Resource == "wordnet" {
		return res, fmt.Errorf("transformation wordnet needs WordNet: %w (give --wordnet DIR)", re.Err)
	}
	return res, err
}

// specList is a repeatable flag.
type specList []string

func (l *specList) String() string     { return strings.Join(*l, " ") }
func (l *specList) Set(s string) error { *l = append(*l, s); return nil }
