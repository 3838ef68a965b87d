package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/counterfit"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/wordvec"
)

// constraintsDir is where shared/data keeps the counter-fitting constraints.
const constraintsDir = "counter-fitting-constraints"

func runEmbedCounterfit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed counterfit", "embed counterfit --vectors FILE --out FILE [--data DIR] [flags]\n\n"+
		"Counter-fits word vectors to synonym and antonym constraints (Mrkšić et al. 2016) and writes them in the\n"+
		"word2vec text format. The substitutes of textfooler, ga and pso are nearest neighbours in such vectors\n"+
		"(attack --vectors). Defaults: the paper's constraints and settings, read from DATA/"+constraintsDir+".", stderr)
	o := counterfit.DefaultOptions()
	var vecPath, out, dataDir, synList, antList, vocabPath, simlex string
	var asJSON bool
	fs.StringVar(&vecPath, "vectors", "", "word vectors to counter-fit (GloVe/word2vec text or fastText .vec, .gz ok; required)")
	fs.StringVar(&out, "out", "", "output vector file (required), written atomically")
	fs.StringVar(&dataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&synList, "synonyms", "", "synonym pair files, comma-separated, one 'word word' pair a line (default DATA/"+constraintsDir+"/ppdb_synonyms.txt)")
	fs.StringVar(&antList, "antonyms", "", "antonym pair files, comma-separated (default DATA/"+constraintsDir+"/ppdb_antonyms.txt,wordnet_antonyms.txt)")
	fs.StringVar(&vocabPath, "vocabulary", "", "one word a line: only these words are read, fitted and written, as in the paper (default DATA/"+constraintsDir+"/vocabulary.txt)")
	fs.StringVar(&simlex, "simlex", "", "SimLex-999 TSV to score the vectors before and after (default DATA/"+constraintsDir+"/SimLex-999.txt when present; 'none' = skip)")
	fs.Float64Var(&o.K1, "k1", o.K1, "weight of antonym repel")
	fs.Float64Var(&o.K2, "k2", o.K2, "weight of synonym attract")
	fs.Float64Var(&o.K3, "k3", o.K3, "weight of vector space preservation (0 = off)")
	fs.Float64Var(&o.Delta, "delta", o.Delta, "antonyms are pushed to at least this cosine distance")
	fs.Float64Var(&o.Gamma, "gamma", o.Gamma, "synonyms are pulled to at most this cosine distance")
	fs.Float64Var(&o.Rho, "rho", o.Rho, "preservation neighbourhood: pairs within this cosine distance in the input")
	fs.IntVar(&o.MaxVSP, "max-vsp", o.MaxVSP, "at most this many preservation neighbours per word, the nearest (0 = all within rho, the paper)")
	fs.IntVar(&o.Iters, "iters", o.Iters, "full-batch update steps")
	fs.BoolVar(&asJSON, "json", false, "print a one-line JSON summary on stdout")
	if err := parse(fs, args); err != nil {
		return err
	}
	cosDist := func(x float64) bool { return finite(x) && x >= 0 && x <= 2 }
	if err := checkNumbers(
		numRule{finite(o.K1) && o.K1 >= 0, "k1", o.K1, "a number ≥ 0"},
		numRule{finite(o.K2) && o.K2 >= 0, "k2", o.K2, "a number ≥ 0"},
		numRule{finite(o.K3) && o.K3 >= 0, "k3", o.K3, "a number ≥ 0 (0 = off)"},
		numRule{cosDist(o.Delta), "delta", o.Delta, "a cosine distance in [0, 2]"},
		numRule{cosDist(o.Gamma), "gamma", o.Gamma, "a cosine distance in [0, 2]"},
		numRule{cosDist(o.Rho), "rho", o.Rho, "a cosine distance in [0, 2]"},
		numRule{o.MaxVSP >= 0, "max-vsp", o.MaxVSP, "≥ 0 (0 = all within rho)"},
		numRule{o.Iters >= 1, "iters", o.Iters, "at least 1"},
	); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if vecPath == "" || out == "" {
		return usageError{fmt.Errorf("--vectors and --out are required")}
	}
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	if synList == "" || antList == "" {
		if _, err := dataDirFor(dataDir, "the default synonym and antonym lists (no --synonyms/--antonyms)"); err != nil {
			return err
		}
	}
	inData := func(name string) string { return filepath.Join(dataDir, constraintsDir, name) }
	if synList == "" {
		synList = inData("ppdb_synonyms.txt")
	}
	if antList == "" {
		antList = inData("ppdb_antonyms.txt") + "," + inData("wordnet_antonyms.txt")
	}
	if vocabPath == "" {
		vocabPath = inData("vocabulary.txt")
	}
	if simlex == "" {
		if _, err := os.Stat(inData("SimLex-999.txt")); err == nil {
			simlex = inData("SimLex-999.txt")
		}
	} else if simlex == "none" {
		simlex = ""
	}

	start := time.Now()
	vocab, err := readWordList(vocabPath)
	if err != nil {
		return fmt.Errorf("--vocabulary: %w", err)
	}
	readPairs := func(list string) ([]counterfit.Pair, error) {
		var all []counterfit.Pair
		for _, p := range splitList(list) {
			ps, err := counterfit.ReadPairs(p)
			if err != nil {
				return nil, err
			}
			all = append(all, ps...)
		}
		return all, nil
	}
	syn, err := readPairs(synList)
	if err != nil {
		return err
	}
	ant, err := readPairs(antList)
	if err != nil {
		return err
	}
	vecs, err := text.LoadVectors(vecPath, vocab)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "counterfit: %d of %d vocabulary words have a vector in %s (dim %d); %d synonym and %d antonym lines\n",
		vecs.NumFound, vocab.Len()-2, vecPath, vecs.Dim, len(syn), len(ant))
	f, err := checkpoint.CreateAtomic(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer f.Abort()

	score := func() (float64, int) {
		if simlex == "" {
			return 0, 0
		}
		rho, n, err := counterfit.SimLex(simlex, vecs, vocab)
		if err != nil {
			fmt.Fprintf(stderr, "counterfit: SimLex-999: %v\n", err)
		}
		return rho, n
	}
	simBefore, simPairs := score()
	st, err := counterfit.Fit(vecs, vocab, syn, ant, o)
	if err != nil {
		return err
	}
	simAfter, _ := score()

	w := &wordvec.Vectors{Dim: vecs.Dim}
	for id := int32(text.UnkID) + 1; int(id) < vocab.Len(); id++ {
		if vecs.Found[id] {
			w.Words = append(w.Words, vocab.Word(id))
			w.Data = append(w.Data, vecs.Row(id)...)
		}
	}
	if err := w.Write(f); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stderr, "counterfit: %d steps over %d words: %d synonym, %d antonym, %d preservation pairs (ordered); "+
		"mean synonym cosine %.3f → %.3f, antonym %.3f → %.3f\n",
		o.Iters, st.Words, st.Synonyms, st.Antonyms, st.VSP, st.SynCosBefore, st.SynCosAfter, st.AntCosBefore, st.AntCosAfter)
	if simlex != "" {
		fmt.Fprintf(stderr, "counterfit: SimLex-999 Spearman ρ %.3f → %.3f (%d of 999 pairs covered)\n", simBefore, simAfter, simPairs)
	}
	fmt.Fprintf(stderr, "wrote %s: %d words × %d in %.1f s\n", out, len(w.Words), w.Dim, secs)
	if asJSON {
		sum := map[string]any{"out": out, "vectors": vecPath, "vocabulary": vocabPath, "synonyms": splitList(synList),
			"antonyms": splitList(antList), "options": o, "stats": st, "words": len(w.Words), "dim": w.Dim, "seconds": secs}
		if simlex != "" {
			sum["simlex_before"], sum["simlex_after"], sum["simlex_pairs"] = simBefore, simAfter, simPairs
		}
		return json.NewEncoder(stdout).Encode(sum)
	}
	return nil
}

// readWordList reads one word a line (lower-cased, blank lines and repeats
// skipped) into a vocabulary with the reserved words first.
func readWordList(path string) (*text.Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	words := []string{text.PadWord, text.UnkWord}
	seen := map[string]bool{text.PadWord: true, text.UnkWord: true}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
			continue
		case len(fields) > 1:
			return nil, fmt.Errorf("%s:%d: want one word a line, got %d", path, line, len(fields))
		}
		w := strings.ToLower(fields[0])
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(words) == 2 {
		return nil, fmt.Errorf("%s: no words", path)
	}
	return text.NewVocab(words)
}
