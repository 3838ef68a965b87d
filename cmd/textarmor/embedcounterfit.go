package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

// constraintsDir is where shared/data keeps the counter-fitting constraints.
const constraintsDir = pipeline.ConstraintsDir

func runEmbedCounterfit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed counterfit", "embed counterfit --vectors FILE --out FILE [--data DIR] [flags]\n\n"+
		"Counter-fits word vectors to synonym and antonym constraints (Mrkšić et al. 2016) and writes them in the\n"+
		"word2vec text format. The substitutes of textfooler, ga and pso are nearest neighbours in such vectors\n"+
		"(attack --vectors). Defaults: the paper's constraints and settings, read from DATA/"+constraintsDir+".", stderr)
	c := pipeline.NewCounterfitConfig()
	o := &c.Options
	var synList, antList string
	var asJSON bool
	fs.StringVar(&c.Vectors, "vectors", "", "word vectors to counter-fit (GloVe/word2vec text or fastText .vec, .gz ok; required)")
	fs.StringVar(&c.Out, "out", "", "output vector file (required), written atomically")
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&synList, "synonyms", "", "synonym pair files, comma-separated, one 'word word' pair a line (default DATA/"+constraintsDir+"/ppdb_synonyms.txt)")
	fs.StringVar(&antList, "antonyms", "", "antonym pair files, comma-separated (default DATA/"+constraintsDir+"/ppdb_antonyms.txt,wordnet_antonyms.txt)")
	fs.StringVar(&c.Vocabulary, "vocabulary", "", "one word a line: only these words are read, fitted and written, as in the paper (default DATA/"+constraintsDir+"/vocabulary.txt)")
	fs.StringVar(&c.SimLex, "simlex", "", "SimLex-999 TSV to score the vectors before and after (default DATA/"+constraintsDir+"/SimLex-999.txt when present; 'none' = skip)")
	fs.Float64Var(&o.K1, "k1", o.K1, "weight of antonym repel")
	fs.Float64Var(&o.K2, "k2", o.K2, "weight of synonym attract")
	fs.Float64Var(&o.K3, "k3", o.K3, "weight of vector space preservation (0 = off)")
	fs.Float64Var(&o.Delta, "delta", o.Delta, "antonyms are pushed to at least this cosine distance")
	fs.Float64Var(&o.Gamma, "gamma", o.Gamma, "synonyms are pulled to at most this cosine distance")
	fs.Float64Var(&o.Rho, "rho", o.Rho, "preservation neighbourhood: pairs within this cosine distance in the input")
	fs.IntVar(&o.MaxVSP, "max-vsp", o.MaxVSP, "at most this many preservation neighbours per word, the nearest (0 = all within rho, the paper)")
	fs.IntVar(&o.Iters, "iters", o.Iters, "full-batch update steps")
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Synonyms, c.Antonyms, c.Log = cli.SplitList(synList), cli.SplitList(antList), stderr
	r, err := pipeline.Counterfit(context.Background(), c)
	if err != nil || !asJSON {
		return err
	}
	rc := r.Config
	sum := map[string]any{"out": rc.Out, "vectors": rc.Vectors, "vocabulary": rc.Vocabulary, "synonyms": rc.Synonyms,
		"antonyms": rc.Antonyms, "options": rc.Options, "stats": r.Stats, "words": r.Words, "dim": r.Dim, "seconds": r.Seconds}
	if rc.SimLex != "" {
		sum["simlex_before"], sum["simlex_after"], sum["simlex_pairs"] = r.SimLexBefore, r.SimLexAfter, r.SimLexPairs
	}
	return json.NewEncoder(stdout).Encode(sum)
}
