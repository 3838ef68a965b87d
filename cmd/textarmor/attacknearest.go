package main

import (
	"flag"
	"os"
	"path/filepath"

	"github.com/textarmor/textarmor/attack"
)

// nearestFlags are --nn-k and --nn-cos: the candidate sets built from
// --vectors for the paper-protocol textfooler, ga and pso.
type nearestFlags struct {
	k   int
	cos float64
	// vocab caps the substitutes from outside the model vocabulary: the
	// first vocab words of the vectors file.
	vocab int
	// set records which of the two were given on the command line.
	kSet, cosSet bool
}

func (nf *nearestFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&nf.k, "nn-k", 50, "with --vectors: substitutes are each word's nn-k nearest vocabulary words (textfooler, pso, iga, hla; ga: 8 unless given)")
	fs.Float64Var(&nf.cos, "nn-cos", 0.5, "with --vectors: ... with cosine ≥ nn-cos (ga, iga: 0.75, i.e. squared distance ≤ 0.5 for unit vectors, unless given)")
	fs.IntVar(&nf.vocab, "nn-vocab", 100000, "with --vectors: substitutes may also be the first nn-vocab words of the vectors file that the model lacks (they reach it as UNK, as in TextAttack); 0 = model vocabulary only")
}

// resolve applies the recipe's own neighbourhood (attack.Needs) where
// --nn-k and --nn-cos were not given.
func (nf *nearestFlags) resolve(fs *flag.FlagSet, need attack.Needs) error {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nn-k":
			nf.kSet = true
		case "nn-cos":
			nf.cosSet = true
		}
	})
	if need.NearestK > 0 && !nf.kSet {
		nf.k = need.NearestK
	}
	if need.NearestK > 0 && !nf.cosSet {
		nf.cos = need.NearestCos
	}
	return checkNumbers(nf.numbers()...)
}

// numbers are the range checks of --nn-k, --nn-cos and --nn-vocab.
func (nf *nearestFlags) numbers() []numRule {
	return []numRule{
		{nf.k >= 1, "nn-k", nf.k, "at least 1"},
		{finite(nf.cos) && nf.cos >= -1 && nf.cos <= 1, "nn-cos", nf.cos, "a cosine in [-1, 1]"},
		{nf.vocab >= 0, "nn-vocab", nf.vocab, "≥ 0 (0 = model vocabulary only)"},
	}
}

// nearestCacheDir is where the table is cached: next to --out, or else in
// the user cache directory ("" when there is none).
func nearestCacheDir(out string) string {
	if out != "" {
		return filepath.Dir(out)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "textarmor", "neighbors")
}
