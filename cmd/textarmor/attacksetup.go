package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
)

// attackSetup builds recipe rc under protocol against m with the CLI's
// resources: the counter-fitted neighbour sets (synPath, default under
// dataDir) for everything but WordNet-PWWS, WordNet for PWWS, and the
// optional extras of attackExtras (word vectors, nearest-neighbour
// substitutes, POS tagger). `attack` and `train --defense flat|adv` share it.
func attackSetup(rc attack.Recipe, protocol string, m *model.Model, synPath, dataDir, wnDir, vecPath string, budget int,
	nf nearestFlags, cacheDir string, stderr io.Writer) (*attack.Configured, error) {
	var res attack.Resources
	res.QueryBudget = budget
	if err := attackExtras(&res, rc.Name, protocol, m, vecPath, wnDir, nf, cacheDir, stderr); err != nil {
		return nil, err
	}
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
