package main

import (
	"fmt"
	"io"
	"path/filepath"

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
	if err := attackExtras(&res, rc.Name, protocol, m, in.vecPath, in.wnDir, in.nf, in.cacheDir, stderr); err != nil {
		return nil, err
	}
	if in.lmPath != "" {
		// Only Alzantot's GA has a language model, and the FTML protocol
		// runs it without one (ftml.md §9).
		if rc.Name != "ga" || protocol == attack.ProtocolFTML {
			return nil, usageError{fmt.Errorf("--lm is used only by --recipe ga (alzantot) without --protocol ftml")}
		}
		lm, err := langmodel.Load(in.lmPath)
		if err != nil {
			return nil, fmt.Errorf("--lm: %w", err)
		}
		res.LM = lm
	}
	synPath, dataDir, wnDir := in.synPath, in.dataDir, in.wnDir
	switch {
	case res.Nearest == nil && (rc.Name != "pwws" || protocol == attack.ProtocolFTML):
		if synPath == "" {
			synPath = filepath.Join(dataDir, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json")
		}
		nb, err := lexicon.LoadNeighbors(synPath)
		if err != nil {
			return nil, fmt.Errorf("synonyms: %w (give --synonyms PATH or --data DIR)", err)
		}
		// The FTML protocol's S(w) lives in the model vocabulary (Jia et
		// al.); TextAttack's recipes keep every neighbour, and those outside
		// the vocabulary reach the model as UNK (attack.Attack.OOVAsUnk).
		res.Synonyms = nb
		if protocol == attack.ProtocolFTML {
			res.Synonyms = nb.Restrict(m.Vocab)
		}
	case rc.Name == "pwws":
		wn, err := lexicon.OpenWordNet(wnDir)
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
