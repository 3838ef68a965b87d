package main

import (
	"flag"

	"github.com/textarmor/textarmor/pipeline"
)

// registerNearest registers --nn-k, --nn-cos and --nn-vocab: the candidate
// sets built from --vectors for the paper-protocol textfooler, ga, pso, iga,
// hla and textbugger.
func registerNearest(fs *flag.FlagSet, n *pipeline.NearestConfig) {
	fs.IntVar(&n.K, "nn-k", n.K, "with --vectors: substitutes are each word's nn-k nearest vocabulary words (textfooler, pso, iga, hla; ga: 8, textbugger: 5 unless given)")
	fs.Float64Var(&n.Cos, "nn-cos", n.Cos, "with --vectors: ... with cosine ≥ nn-cos (ga, iga: 0.75, i.e. squared distance ≤ 0.5 for unit vectors; textbugger: -1, any; unless given)")
	fs.IntVar(&n.Vocab, "nn-vocab", n.Vocab, "with --vectors: substitutes may also be the first nn-vocab words of the vectors file that the model lacks (they reach it as UNK, as in TextAttack); 0 = model vocabulary only")
}

// nearestGiven records which of --nn-k and --nn-cos were given: the
// recipe's own neighbourhood replaces the others.
func nearestGiven(fs *flag.FlagSet, n *pipeline.NearestConfig) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nn-k":
			n.KGiven = true
		case "nn-cos":
			n.CosGiven = true
		}
	})
}
