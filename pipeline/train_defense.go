package pipeline

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// DefenseConfig chooses the training objective: a defense of
// defense.Defenses and its settings.
type DefenseConfig struct {
	Name string // --defense: defense.Names (flat and adv train in attack rounds)
	// Synonyms is the neighbour table (JSON word -> neighbours) of the
	// synonym-based defenses, the rounds' attack, the group mask and the
	// retrofit; "" = DefaultSynonyms(Data.Dir).
	Synonyms string
	// Settings are FTML's, CML's and the baselines' (SEM, ATFL, ASCC, IBP)
	// hyper-parameters; Settings.Norm is 1, 2 or +Inf.
	Settings defense.Settings
	// IBPRampEpochs are the epochs over which IBP's κ and ε ramp up (-1 =
	// the first 2/3 of the epochs).
	IBPRampEpochs int
	// ProbInputs feeds softmax probabilities to the cross-entropy (the FLAT
	// reference's double softmax; standard, adv and flat only).
	ProbInputs bool
	Rounds     RoundsConfig
	GroupMask  GroupMaskConfig
	// FreeLBRow is the paper's Table 1 row whose values fill the negative
	// fields of Settings.FreeLB (FreeLB, CARL and RAR): auto (the
	// dataset's, defense.FreeLBRowFor) or a defense.FreeLBRows name.
	FreeLBRow string

	// dictionary is a transformer's dictionary (the vocabulary
	// supplement's words): the synonym defenses' words.
	dictionary []string
}

// NewDefenseConfig returns standard training with every defense's default
// settings.
func NewDefenseConfig() DefenseConfig {
	s := defense.DefaultSettings()
	s.FreeLB = defense.FreeLBConfig{N: -1, Alpha: -1, Gamma: -1, Eps: -1}
	return DefenseConfig{Name: "standard", Settings: s, IBPRampEpochs: -1, Rounds: NewRoundsConfig(), FreeLBRow: "auto"}
}

// freeLB is Settings.FreeLB with its negative fields from the Table 1 row
// of FreeLBRow for dataset, and that row's name.
func (d *DefenseConfig) freeLB(dataset string) (defense.FreeLBConfig, string, error) {
	row := d.FreeLBRow
	if row == "" || row == "auto" {
		row = defense.FreeLBRowFor(dataset)
	}
	f, err := defense.FreeLBRow(row, d.Settings.FreeLB)
	if err != nil {
		return f, row, configErrorf("--freelb-row: %v", err)
	}
	return f, row, nil
}

// lookup is the chosen defense (the zero Defense for an unknown name,
// which Check refuses).
func (d *DefenseConfig) lookup() defense.Defense {
	def, _ := defense.Lookup(d.Name)
	return def
}

// NormName writes a distance norm as --ftml-norm takes it.
func NormName(p float64) string {
	if math.IsInf(p, 1) {
		return "inf"
	}
	return fmt.Sprint(p)
}

// Objective builds the training objective for m. The synonym-based
// defenses read the neighbour table (restricted to m's vocabulary) and
// report its coverage and their margins to log.
func (d *DefenseConfig) Objective(m *model.Model, dataset, dataDir string, log io.Writer) (train.Objective, error) {
	if log == nil {
		log = io.Discard
	}
	s := d.Settings
	var row string
	var err error
	if s.FreeLB, row, err = d.freeLB(dataset); err != nil {
		return nil, err
	}
	if d.Name == "freelb" || defense.SharesFlags(d.Name, "freelb") {
		f := s.FreeLB
		fmt.Fprintf(log, "freelb: n %d, α %g, γ %g, ε %g (Table 1's %s row for %s, unless given)\n", f.N, f.Alpha, f.Gamma, f.Eps, row, dataset)
	}
	switch d.Name {
	case "standard", "adv": // adv: --synonyms feeds the attack, not the objective
		return train.Standard{ProbInputs: d.ProbInputs}, nil
	case "flat":
		o, err := defense.NewFLAT(d.Rounds.Beta, d.Rounds.Gamma)
		if err != nil {
			return nil, &ConfigError{err}
		}
		o.ProbInputs = d.ProbInputs
		if o.Entropy, err = nn.ParseEntropyReduction(string(d.Rounds.Entropy)); err != nil {
			return nil, configErrorf("--flat-entropy-reduction: %w", err)
		}
		if m.Pieces != nil { // a transformer reading word pieces: L_imp over words (spec F5)
			o.Words = defense.PieceWordsOf(m.Pieces)
		}
		return o, nil
	}
	if def, _ := defense.Lookup(d.Name); def.Embedding {
		obj, err := defense.NewObjective(d.Name, s, nil, nil)
		if err != nil {
			return nil, &ConfigError{err}
		}
		return obj, nil
	}
	if s.IBPHull, err = defense.ParseHull(string(s.IBPHull)); err != nil {
		return nil, configErrorf("--ibp-hull: %v", err)
	}
	syn, path, err := d.synonyms(m, dataDir, s.K)
	if err != nil {
		return nil, err
	}
	with, total := syn.Coverage()
	fmt.Fprintf(log, "synonyms: %d of %d vocabulary words (%.1f%%) have synonyms in %s\n",
		with, total, 100*float64(with)/float64(max(total, 1)), path)
	obj, err := defense.NewObjective(d.Name, s, syn, m.Net.Emb.W.Value)
	if err != nil {
		return nil, &ConfigError{err}
	}
	var cfg *defense.FTMLConfig
	switch o := obj.(type) {
	case *defense.FTML:
		cfg = &o.FTMLConfig
	case *defense.CML:
		cfg = &o.FTMLConfig
	}
	if cfg != nil {
		if cfg.Alpha0 > 0 {
			fmt.Fprintf(log, "%s: alpha0 = %.4f (mean word distance of the initial table), alpha = 0.7·alpha0 = %.4f; beta %g, k %d, norm %s\n",
				d.Name, cfg.Alpha0, cfg.Alpha, cfg.Beta, cfg.K, NormName(s.Norm))
		} else {
			fmt.Fprintf(log, "%s: alpha = %.4f (given); beta %g, k %d, norm %s\n", d.Name, cfg.Alpha, cfg.Beta, cfg.K, NormName(s.Norm))
		}
	}
	return obj, nil
}

// synonyms is the synonym table over m's vocabulary: its words, or a
// transformer's dictionary words (whole tokens after the vocabulary
// supplement).
func (d *DefenseConfig) synonyms(m *model.Model, dataDir string, k int) (*defense.SynonymTable, string, error) {
	if m.Pieces == nil {
		return LoadSynonyms(d.Synonyms, dataDir, m.Vocab, k)
	}
	if len(d.dictionary) == 0 {
		return nil, "", configErrorf("--defense %s on a transformer needs the vocabulary supplement's dictionary (--vocab-supplement > 0)", d.Name)
	}
	n, path, err := LoadNeighbors(d.Synonyms, dataDir)
	if err != nil {
		return nil, path, err
	}
	syn, err := defense.NewPieceSynonymTable(n, m.Pieces, d.dictionary, k)
	return syn, path, err
}

// Prepare finishes what needs the data and the options: IBP's ramp length
// in optimiser steps, and its architecture check.
func (d *DefenseConfig) Prepare(obj train.Objective, m *model.Model, trainSize int, opt train.Options) error {
	p, ok := obj.(*defense.IBP)
	if !ok {
		return nil
	}
	if err := p.Prepare(m.Net, trainSize, opt.Epochs, opt.BatchSize, d.IBPRampEpochs); err != nil {
		return configErrorf("--defense ibp: %v", err)
	}
	return nil
}

// DescribeObjective records an objective's settings in the training
// record (info) and writes its one-line summary to log, for those that
// have them.
func DescribeObjective(obj train.Objective, info map[string]any, log io.Writer) {
	if in, ok := obj.(train.Recorded); ok {
		if settings := in.Info(); len(settings) > 0 {
			info[obj.Name()] = settings
		}
	}
	if sm, ok := obj.(interface{ Summary() string }); ok && log != nil {
		fmt.Fprintln(log, sm.Summary())
	}
}

// LoadSynonyms reads the neighbour table at path (default: the
// counter-fitted neighbours under dataDir) restricted to vocab, k per word;
// it returns the path used.
func LoadSynonyms(path, dataDir string, vocab *text.Vocab, k int) (*defense.SynonymTable, string, error) {
	n, path, err := LoadNeighbors(path, dataDir)
	if err != nil {
		return nil, path, err
	}
	return defense.NewSynonymTable(n, vocab, k), path, nil
}

// LoadNeighbors reads the neighbour table at path (default: the
// counter-fitted neighbours under dataDir); it returns the path used.
func LoadNeighbors(path, dataDir string) (*lexicon.Neighbors, string, error) {
	if path == "" {
		var err error
		if path, err = DefaultSynonyms(dataDir); err != nil {
			return nil, "", err
		}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, path, fmt.Errorf("synonym table %s: %w (give one with --synonyms PATH, or --data DIR holding counterfitted-neighbors-jia2019/)", path, err)
	}
	n, err := lexicon.LoadNeighbors(path)
	if err != nil {
		return nil, path, err
	}
	return n, path, nil
}

// Certify returns the certified accuracy of m on ex (Jia et al.'s IBP
// certificate: boxes at ε = 1 over the first k synonyms per word, taken
// where m's IBP training took them); log is told when m was not trained
// with IBP.
func Certify(m *model.Model, syn *defense.SynonymTable, ex []dataset.Example, k int, log io.Writer) (float64, error) {
	acc, err := defense.CertifiedAccuracy(m.Net, syn, train.Encode(m, ex), k, 1, TrainedHull(m))
	if err != nil {
		return 0, fmt.Errorf("--certify: %v", err)
	}
	if m.Training["objective"] != "ibp" && log != nil {
		fmt.Fprintf(log, "note: this model was not trained with IBP (objective %v); its certificate is usually near 0\n", m.Training["objective"])
	}
	return acc, nil
}

// TrainedHull is the hull m's IBP training used (HullEmbedding for other
// models and for records from before the choice existed).
func TrainedHull(m *model.Model) defense.Hull {
	if rec, ok := m.Training["ibp"].(map[string]any); ok {
		if s, ok := rec["hull"].(string); ok {
			if h, err := defense.ParseHull(s); err == nil {
				return h
			}
		}
	}
	return defense.HullEmbedding
}
