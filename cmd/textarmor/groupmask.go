package main

import (
	"flag"
	"fmt"

	"github.com/textarmor/textarmor/pipeline"
)

// registerGroupFlags registers FLAT's trivial group-mask baseline (spec
// flat.md §11, Table 10): `train --defense standard --group-mask G`.
func registerGroupFlags(fs *flag.FlagSet, g *pipeline.GroupMaskConfig) {
	fs.IntVar(&g.Groups, "group-mask", 0, "standard: FLAT's trivial group-mask baseline with this many groups, each sharing one learnt scalar on its words' embeddings (0 = off); "+
		"groups are the neighbour-graph components of --synonyms packed into G, or k-means clusters with --group-vectors")
	fs.StringVar(&g.Vectors, "group-vectors", "", "standard: word vectors (e.g. counter-fitted) to cluster by k-means for --group-mask (spec §11); default: neighbour-graph components of --synonyms")
}

// checkGroupFlag reports a group-mask flag given with another defense.
func checkGroupFlag(name, defenseName string) error {
	switch name {
	case "group-mask", "group-vectors":
		if defenseName != "standard" {
			return usageError{fmt.Errorf("--%s needs --defense standard (the group-mask baseline trains with cross-entropy)", name)}
		}
	}
	return nil
}
