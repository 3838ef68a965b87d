package pipeline

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/mlm"
	"github.com/textarmor/textarmor/model"
)

// NearestConfig makes the nearest-neighbour substitutes from word vectors
// (AttackResources.Vectors): the candidate sets of the paper-protocol
// textfooler, ga, pso, iga, hla and textbugger.
type NearestConfig struct {
	K   int     // each word's K nearest vocabulary words (--nn-k)
	Cos float64 // … with cosine ≥ Cos (--nn-cos)
	// Vocab lets substitutes also be the first Vocab words of the vectors
	// file that the model lacks (they reach it as UNK, as in TextAttack);
	// 0 = model vocabulary only (--nn-vocab).
	Vocab int
	// KGiven and CosGiven say K and Cos were chosen by the user; otherwise
	// a recipe with a neighbourhood of its own (attack.Needs.NearestK and
	// NearestCos: Alzantot's 8 and 0.75, TextBugger's 5 and −1) replaces them.
	KGiven, CosGiven bool
}

// NewNearestConfig returns the CLI's defaults: TextFooler's 50 nearest
// words with cosine ≥ 0.5, and the first 100,000 words of the vectors file.
func NewNearestConfig() NearestConfig { return NearestConfig{K: 50, Cos: 0.5, Vocab: 100000} }

// Check validates the numbers.
func (n NearestConfig) Check() error {
	switch {
	case n.K < 1:
		return configErrorf("--nn-k %d must be at least 1", n.K)
	case math.IsNaN(n.Cos) || n.Cos < -1 || n.Cos > 1:
		return configErrorf("--nn-cos %v must be a cosine in [-1, 1]", n.Cos)
	case n.Vocab < 0:
		return configErrorf("--nn-vocab %d must be ≥ 0 (0 = model vocabulary only)", n.Vocab)
	}
	return nil
}

// Resolve applies the recipe's own neighbourhood (need.NearestK and
// NearestCos) where K and Cos were not given.
func (n NearestConfig) Resolve(need attack.Needs) NearestConfig { return n.resolve(need) }

// resolve applies the recipe's own neighbourhood where K and Cos were not
// given.
func (n NearestConfig) resolve(need attack.Needs) NearestConfig {
	if need.NearestK > 0 && !n.KGiven {
		n.K = need.NearestK
	}
	if need.NearestK > 0 && !n.CosGiven {
		n.Cos = need.NearestCos
	}
	return n
}

// AttackResources say where an attack's resources are: BuildRecipe and
// Attack read those the attack needs (attack.LoadResources), with errors
// that name the CLI flag giving each.
type AttackResources struct {
	Synonyms string // counter-fitted neighbour JSON ("" = the one under DataDir, DefaultSynonyms)
	DataDir  string
	WordNet  string // WordNet dict folder
	Vectors  string // word vectors (optional)
	LM       string // language model (optional; ga without the FTML protocol)
	// MLM is a Hugging Face directory with a masked-LM head (bae,
	// bert-attack); SentenceEncoder a transformer sentence encoder for
	// their USE constraint ("" = all-MiniLM-L6-v2 under DataDir, when
	// there).
	MLM, SentenceEncoder string
	QueryBudget          int // model queries per example (0 = no limit)
	Nearest              NearestConfig
	CacheDir             string    // where nearest-neighbour tables are cached (NearestCacheDir)
	Log                  io.Writer // what was loaded and computed (nil = discard)
}

// NearestCacheDir is where nearest-neighbour tables are cached: next to
// the results CSV, or else in the user cache directory ("" when there is
// none).
func NearestCacheDir(csvPath string) string {
	if csvPath != "" {
		return filepath.Dir(csvPath)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "textarmor", "neighbors")
}

// errLMOnlyGA refuses a language model that the recipe does not use: only
// Alzantot's GA has one, and the FTML protocol runs it without (ftml.md §9).
var errLMOnlyGA = errors.New("--lm is used only by --recipe ga (alzantot) without --protocol ftml")

// BuildRecipe builds recipe rc under protocol against m with the resources
// its Needs name. `attack` and `train --defense flat|adv` share it.
func BuildRecipe(rc attack.Recipe, protocol string, m *model.Model, in AttackResources) (*attack.Configured, error) {
	need := rc.Needs(protocol)
	if in.LM != "" && !need.LM {
		return nil, &ConfigError{errLMOnlyGA}
	}
	res, err := loadAttackResources(need, m, in)
	var re *attack.ResourceError
	if errors.As(err, &re) && re.Resource == "wordnet" {
		return nil, fmt.Errorf("%s needs WordNet: %w (give --wordnet DIR, or use --protocol ftml)", rc.Name, re.Err)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := rc.Build(protocol, res)
	if err != nil {
		return nil, &ConfigError{err}
	}
	return cfg, nil
}

// loadAttackResources is attack.LoadResources with the default synonym
// table under the data folder, and hints naming the flags.
func loadAttackResources(need attack.Needs, m *model.Model, in AttackResources) (attack.Resources, error) {
	files := attack.ResourceFiles{Synonyms: in.Synonyms, WordNet: in.WordNet, Vectors: in.Vectors, LM: in.LM,
		NearestK: in.Nearest.K, NearestCos: in.Nearest.Cos, NearestVocab: in.Nearest.Vocab, CacheDir: in.CacheDir,
		QueryBudget: in.QueryBudget, Log: in.Log,
		DefaultSynonyms: func() (string, error) { return DefaultSynonyms(in.DataDir) }}
	// HLA's USE stand-in on a model whose embedding table holds word pieces
	// (a transformer) or is out of reach (a remote victim): without word
	// vectors, the transformer sentence encoder that bae and bert-attack
	// use — the bench FTML table's choice for its transformer rows.
	sentenceHLA := need.Encoder && in.Vectors == "" && (m.Pieces != nil || m.Net == nil) && sentenceEncoderDir(in) != ""
	if sentenceHLA {
		need.Encoder, need.SentenceModel = false, true
	}
	res, err := attack.LoadResources(need, m, files)
	if err == nil {
		err = loadContextual(need, &res, in)
	}
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
		return res, configErrorf("%v (give --vectors, or a sentence encoder: --sentence-encoder DIR or --data DIR with models/all-MiniLM-L6-v2)", re.Err)
	}
	return res, err
}

// attackPartName is the name of a part spec ("genetic:pop=30" → "genetic").
func attackPartName(spec string) string {
	n, _, _ := strings.Cut(spec, ":")
	return strings.TrimSpace(n)
}

// partsUseLM reports whether a constraint of p needs the language model.
func partsUseLM(p attack.Parts) bool {
	return slices.ContainsFunc(p.Constraints, func(c string) bool { return attackPartName(c) == "lm-top" })
}

// partResources loads what the parts of a composed attack name: the
// neighbour sets or WordNet for the transformation; word vectors for
// nearest substitutes, the embedding and sentence-similarity constraints
// and HLA; the tagger for pos; the language model for lm-top.
func partResources(p attack.Parts, protocol string, m *model.Model, in AttackResources) (attack.Resources, error) {
	tr := attackPartName(p.Transformation)
	need := attack.Needs{Synonyms: tr == "synonyms", WordNet: tr == "wordnet", Nearest: tr == "nearest",
		Encoder: attackPartName(p.Search) == "hla", LM: partsUseLM(p), OOV: protocol != attack.ProtocolFTML,
		Tagger: slices.ContainsFunc(p.Constraints, func(c string) bool { return attackPartName(c) == "pos" })}
	res, err := loadAttackResources(need, m, in)
	var re *attack.ResourceError
	if errors.As(err, &re) && re.Resource == "wordnet" {
		return res, fmt.Errorf("transformation wordnet needs WordNet: %w (give --wordnet DIR)", re.Err)
	}
	return res, err
}

// loadContextual adds the masked language model and the sentence encoder
// that bae and bert-attack read.
func loadContextual(need attack.Needs, res *attack.Resources, in AttackResources) error {
	log := orDiscard(in.Log)
	if need.MaskedLM {
		if in.MLM == "" {
			return configErrorf("this recipe needs a masked language model: give --mlm DIR (a Hugging Face directory with a masked-LM head; 'mlm train-head' writes one)")
		}
		m, err := model.ImportHF(in.MLM, model.ImportOptions{Reconstructor: true})
		if err != nil {
			return fmt.Errorf("--mlm: %w", err)
		}
		if own, _ := m.Training["reconstructor_from_checkpoint"].(bool); !own {
			return configErrorf("--mlm %s has no masked-LM head (cls.predictions.*): train one with 'mlm train-head --init %s --out DIR'", in.MLM, in.MLM)
		}
		p, err := mlm.NewPredictor(m, filepath.Base(filepath.Clean(in.MLM)))
		if err != nil {
			return fmt.Errorf("--mlm %s: %w", in.MLM, err)
		}
		res.MaskedLM = p
		fmt.Fprintf(log, "masked language model: %s\n", in.MLM)
	}
	if need.SentenceModel {
		dir := sentenceEncoderDir(in)
		if dir == "" {
			return nil // the recipe declares the constraint omitted
		}
		m, err := model.Open(dir)
		if err != nil {
			return fmt.Errorf("--sentence-encoder: %w", err)
		}
		res.Encoder = attack.NewModelEncoder(m, filepath.Base(filepath.Clean(dir)))
		fmt.Fprintf(log, "sentence encoder: %s\n", dir)
	}
	return nil
}

// sentenceEncoderDir is the transformer sentence encoder to use: the one
// given, else the shared MiniLM under the data folder ("" when neither).
func sentenceEncoderDir(in AttackResources) string {
	if in.SentenceEncoder != "" || in.DataDir == "" {
		return in.SentenceEncoder
	}
	if d := filepath.Join(in.DataDir, "models", "all-MiniLM-L6-v2"); isFile(filepath.Join(d, "config.json")) {
		return d
	}
	return ""
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
