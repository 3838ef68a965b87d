package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/counterfit"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/wordvec"
)

// ConstraintsDir is where a data folder laid out like shared/data keeps
// the counter-fitting constraints, vocabulary and SimLex-999.
const ConstraintsDir = "counter-fitting-constraints"

// CounterfitConfig configures Counterfit (`textarmor embed counterfit`).
type CounterfitConfig struct {
	// Vectors are the word vectors to counter-fit (GloVe/word2vec text or
	// fastText .vec, .gz ok); Out the vector file to write, atomically.
	// Both are required.
	Vectors, Out string
	// DataDir holds ConstraintsDir, where the defaults of the files below
	// are.
	DataDir string
	// Synonyms and Antonyms are pair files, one "word word" pair a line
	// (none = the paper's: ppdb_synonyms.txt; ppdb_antonyms.txt and
	// wordnet_antonyms.txt).
	Synonyms, Antonyms []string
	// Vocabulary lists the words read, fitted and written, one a line, as
	// in the paper ("" = vocabulary.txt).
	Vocabulary string
	// SimLex is SimLex-999 to score the vectors before and after ("" =
	// SimLex-999.txt when present; "none" = skip).
	SimLex  string
	Options counterfit.Options
	Log     io.Writer // progress and summary lines (nil = discard)
}

// NewCounterfitConfig returns the CLI's defaults: the paper's settings.
func NewCounterfitConfig() CounterfitConfig {
	return CounterfitConfig{Options: counterfit.DefaultOptions()}
}

// Check validates the settings and that the defaults have a data folder.
func (c CounterfitConfig) Check() error {
	o := c.Options
	cosDist := func(x float64) bool { return isFinite(x) && x >= 0 && x <= 2 }
	if err := CheckRules(
		Rule{isFinite(o.K1) && o.K1 >= 0, "k1", o.K1, "a number ≥ 0"},
		Rule{isFinite(o.K2) && o.K2 >= 0, "k2", o.K2, "a number ≥ 0"},
		Rule{isFinite(o.K3) && o.K3 >= 0, "k3", o.K3, "a number ≥ 0 (0 = off)"},
		Rule{cosDist(o.Delta), "delta", o.Delta, "a cosine distance in [0, 2]"},
		Rule{cosDist(o.Gamma), "gamma", o.Gamma, "a cosine distance in [0, 2]"},
		Rule{cosDist(o.Rho), "rho", o.Rho, "a cosine distance in [0, 2]"},
		Rule{o.MaxVSP >= 0, "max-vsp", o.MaxVSP, "≥ 0 (0 = all within rho)"},
		Rule{o.Iters >= 1, "iters", o.Iters, "at least 1"},
	); err != nil {
		return err
	}
	if c.Vectors == "" || c.Out == "" {
		return configErrorf("--vectors and --out are required")
	}
	if err := o.Validate(); err != nil {
		return &ConfigError{err}
	}
	if len(c.Synonyms) == 0 || len(c.Antonyms) == 0 {
		if _, err := DataDir(c.DataDir, "the default synonym and antonym lists (no --synonyms/--antonyms)"); err != nil {
			return err
		}
	}
	return nil
}

// withDefaults fills the files left unset from DataDir.
func (c CounterfitConfig) withDefaults() CounterfitConfig {
	inData := func(name string) string { return filepath.Join(c.DataDir, ConstraintsDir, name) }
	if len(c.Synonyms) == 0 {
		c.Synonyms = []string{inData("ppdb_synonyms.txt")}
	}
	if len(c.Antonyms) == 0 {
		c.Antonyms = []string{inData("ppdb_antonyms.txt"), inData("wordnet_antonyms.txt")}
	}
	if c.Vocabulary == "" {
		c.Vocabulary = inData("vocabulary.txt")
	}
	switch c.SimLex {
	case "":
		if _, err := os.Stat(inData("SimLex-999.txt")); err == nil {
			c.SimLex = inData("SimLex-999.txt")
		}
	case "none":
		c.SimLex = ""
	}
	return c
}

// CounterfitReport describes the counter-fitting and the file written.
type CounterfitReport struct {
	// Config is the configuration with every default filled in (SimLex ""
	// when not scored).
	Config CounterfitConfig
	Stats  counterfit.Stats
	// Words × Dim vectors were written.
	Words, Dim int
	// SimLexBefore and SimLexAfter are Spearman's ρ on SimLexPairs of
	// SimLex-999's pairs (when Config.SimLex is set).
	SimLexBefore, SimLexAfter float64
	SimLexPairs               int
	Seconds                   float64
}

// Counterfit counter-fits word vectors to synonym and antonym constraints
// (Mrkšić et al. 2016) and writes them in the word2vec text format.
func Counterfit(ctx context.Context, c CounterfitConfig) (*CounterfitReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	log := orDiscard(c.Log)
	start := time.Now()
	vocab, err := counterfit.ReadWordList(c.Vocabulary)
	if err != nil {
		return nil, fmt.Errorf("--vocabulary: %w", err)
	}
	syn, err := readPairFiles(c.Synonyms)
	if err != nil {
		return nil, err
	}
	ant, err := readPairFiles(c.Antonyms)
	if err != nil {
		return nil, err
	}
	vecs, err := text.LoadVectors(c.Vectors, vocab)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "counterfit: %d of %d vocabulary words have a vector in %s (dim %d); %d synonym and %d antonym lines\n",
		vecs.NumFound, vocab.Len()-2, c.Vectors, vecs.Dim, len(syn), len(ant))
	f, err := checkpoint.CreateAtomic(c.Out)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	defer f.Abort()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	r := &CounterfitReport{Config: c}
	score := func() (float64, int) {
		if c.SimLex == "" {
			return 0, 0
		}
		rho, n, err := counterfit.SimLex(c.SimLex, vecs, vocab)
		if err != nil {
			fmt.Fprintf(log, "counterfit: SimLex-999: %v\n", err)
		}
		return rho, n
	}
	r.SimLexBefore, r.SimLexPairs = score()
	if r.Stats, err = counterfit.Fit(vecs, vocab, syn, ant, c.Options); err != nil {
		return nil, err
	}
	r.SimLexAfter, _ = score()

	w := &wordvec.Vectors{Dim: vecs.Dim}
	for id := int32(text.UnkID) + 1; int(id) < vocab.Len(); id++ {
		if vecs.Found[id] {
			w.Words = append(w.Words, vocab.Word(id))
			w.Data = append(w.Data, vecs.Row(id)...)
		}
	}
	if err := w.Write(f); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Out, err)
	}
	if err := f.Commit(); err != nil {
		return nil, err
	}
	r.Words, r.Dim, r.Seconds = len(w.Words), w.Dim, time.Since(start).Seconds()
	st := r.Stats
	fmt.Fprintf(log, "counterfit: %d steps over %d words: %d synonym, %d antonym, %d preservation pairs (ordered); "+
		"mean synonym cosine %.3f → %.3f, antonym %.3f → %.3f\n",
		c.Options.Iters, st.Words, st.Synonyms, st.Antonyms, st.VSP, st.SynCosBefore, st.SynCosAfter, st.AntCosBefore, st.AntCosAfter)
	if c.SimLex != "" {
		fmt.Fprintf(log, "counterfit: SimLex-999 Spearman ρ %.3f → %.3f (%d of 999 pairs covered)\n", r.SimLexBefore, r.SimLexAfter, r.SimLexPairs)
	}
	fmt.Fprintf(log, "wrote %s: %d words × %d in %.1f s\n", c.Out, r.Words, r.Dim, r.Seconds)
	return r, nil
}

// readPairFiles reads the constraint pairs of every file, in order.
func readPairFiles(paths []string) ([]counterfit.Pair, error) {
	var all []counterfit.Pair
	for _, p := range paths {
		ps, err := counterfit.ReadPairs(p)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}
