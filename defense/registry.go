package defense

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// Defense describes one training defense.
type Defense struct {
	Name    string
	Summary string
	// Synonyms: the objective is built over a synonym table
	// (NewObjective); the others need none.
	Synonyms bool
	// Rounds: the defense trains in attack-and-train rounds (an attack
	// builds each round's data), which the caller runs; its per-round
	// objective is NewFLAT's (flat) or train.Standard (adv).
	Rounds bool
	// FlagPrefix starts the names of its own settings on a command line
	// ("" when it has none of its own).
	FlagPrefix string
	// LR is the learning rate its spec trains with when none is given (0:
	// the trainer's default).
	LR float64
	// Embedding: the objective perturbs the encoder's input embeddings
	// (AdvText); it needs no synonym table.
	Embedding bool
}

// Defenses lists every defense, standard training first.
func Defenses() []Defense {
	return []Defense{
		{Name: "standard", Summary: "cross-entropy"},
		{Name: "ftml", Summary: "FTML (seed 000): triplet metric learning that pulls words towards their synonyms", Synonyms: true, FlagPrefix: "ftml-"},
		{Name: "cml", Summary: "contrastive metric learning (FTML's CML ablation, temperature τ)", Synonyms: true, FlagPrefix: "cml-"},
		{Name: "sem", Summary: "synonym encoding: each synonym cluster shares one word id (Wang et al. 2021)", Synonyms: true, FlagPrefix: "sem-"},
		{Name: "atfl", Summary: "adversarial training with fast gradient projection substitutions (Wang et al. 2021)", Synonyms: true, FlagPrefix: "atfl-"},
		{Name: "ascc", Summary: "adversarial sparse convex combinations of synonym embeddings (Dong et al. 2021)", Synonyms: true, FlagPrefix: "ascc-"},
		{Name: "ibp", Summary: "interval bound propagation over synonym boxes, certified (Jia et al. 2019)", Synonyms: true, FlagPrefix: "ibp-"},
		{Name: "advt", Summary: "AdvT-Text: adversarial training on a normalised-gradient perturbation of the embeddings (Miyato et al. 2017)", FlagPrefix: "advt-", Embedding: true},
		{Name: "iadvt", Summary: "iAdvT-Text: the perturbation in the span of directions towards each word's nearest words (Sato et al. 2018)", FlagPrefix: "iadvt-", Embedding: true},
		{Name: "spgd", Summary: "SPGD (seed 003): sparse perturbations projected towards one neighbouring word each (Barham and Feizi 2019)", FlagPrefix: "spgd-", Embedding: true},
		{Name: "fgm", Summary: "FGM adversarial training: one normalised-gradient step on the embeddings (Miyato et al. 2017)", FlagPrefix: "fgm-", Embedding: true},
		{Name: "freelb", Summary: "FreeLB: n ascent steps on an embedding perturbation, the parameter gradients accumulated over them (Zhu et al. 2020)", FlagPrefix: "freelb-", Embedding: true},
		{Name: "carl", Summary: "CARL (seed 001): FreeLB plus a contrastive loss pulling clean and adversarial sentence vectors together against memory banks of other-label examples", FlagPrefix: "carl-", Embedding: true},
		{Name: "rar", Summary: "RAR (seed 001): FreeLB with a head, tied to the embeddings, that reconstructs every token from the perturbed input's token states (Qiu et al. 2021)", FlagPrefix: "rar-", Embedding: true},
		{Name: "pgd", Summary: "PGD adversarial training: projected steps inside an ε-ball of the embeddings (Madry et al. 2018)", FlagPrefix: "pgd-", Embedding: true},
		{Name: "flat", Summary: "FLAT (seed 004): variational word masks trained in attack rounds", Rounds: true, LR: 0.005, FlagPrefix: "flat-"}, // FLAT spec §5
		{Name: "adv", Summary: "adversarial training in attack rounds, cross-entropy", Rounds: true, LR: 0.01},                                    // FLAT spec §5
	}
}

// Names lists the defense names in Defenses' order.
func Names() []string {
	var out []string
	for _, d := range Defenses() {
		out = append(out, d.Name)
	}
	return out
}

// Lookup finds a defense by name; the error lists the valid ones.
func Lookup(name string) (Defense, error) {
	for _, d := range Defenses() {
		if d.Name == name {
			return d, nil
		}
	}
	return Defense{}, fmt.Errorf("unknown defense %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// Settings are the parameters of the synonym-based defenses, one field
// group per defense; DefaultSettings gives the papers' (and specs')
// values.
type Settings struct {
	// FTML and CML (FTMLConfig): synonyms per word and negatives per batch,
	// distance norm (1, 2 or +Inf), squared distances, margin α (0: from
	// α0), weight β, whether cross-entropy trains the embedding table.
	K                  int
	Norm               float64
	Squared            bool
	Alpha, Beta        float64
	CEUpdatesEmbedding bool
	// CMLTau is CML's temperature.
	CMLTau float64
	// SEMK builds SEM's clusters from each word's SEMK nearest synonyms
	// (0: the whole table).
	SEMK int
	// ATFLSteps is ATFL's N_max, the most substitutions per text.
	ATFLSteps int
	// ASCC's inner maximisation: steps, Adam learning rate, entropy
	// weight, and the weight of KL(f(x) || f(adv)).
	ASCCSteps                     int
	ASCCLR, ASCCEntropy, ASCCBeta float64
	// IBP's final κ and ε, and where the synonym boxes are taken.
	IBPKappa, IBPEps float64
	IBPHull          Hull
	// AdvT, IAdvT, SPGD, FGM and PGD are the embedding-space methods'
	// settings.
	AdvT, IAdvT, SPGD, FGM, PGD AdvTextConfig
	FreeLB                      FreeLBConfig
	// CARL's and RAR's own settings; their FreeLB fields are ignored:
	// both run with FreeLB's (the paper freezes FreeLB's for them).
	CARL CARLConfig
	RAR  RARConfig
}

// DefaultSettings returns the specs' defaults.
func DefaultSettings() Settings {
	f, a, i := DefaultFTMLConfig(nil), NewASCC(nil), NewIBP(nil)
	return Settings{K: f.K, Norm: f.P, Squared: f.Squared, Alpha: f.Alpha, Beta: f.Beta, CEUpdatesEmbedding: f.CEUpdatesEmbedding,
		CMLTau: 20, SEMK: 4, ATFLSteps: NewATFL(nil).MaxSteps,
		ASCCSteps: a.Steps, ASCCLR: a.LR, ASCCEntropy: a.EntropyWeight, ASCCBeta: a.Beta,
		IBPKappa: i.KappaMax, IBPEps: i.EpsMax, IBPHull: HullEmbedding,
		AdvT: DefaultAdvText(MethodAdvT), IAdvT: DefaultAdvText(MethodIAdvT), SPGD: DefaultAdvText(MethodSPGD),
		FGM: DefaultAdvText(MethodFGM), PGD: DefaultAdvText(MethodPGD), FreeLB: DefaultFreeLB(), CARL: DefaultCARL(), RAR: DefaultRAR()}
}

// SettingsFields names the Settings fields the defense reads (nil for
// those with none): what a record of a run compares, so that another
// defense's settings, or fields added later, do not tell two runs apart.
// Every synonym-based defense reads K (the synonyms per word).
func SettingsFields(name string) []string {
	switch name {
	case "ftml":
		return []string{"K", "Norm", "Squared", "Alpha", "Beta", "CEUpdatesEmbedding"}
	case "cml":
		return []string{"K", "Norm", "Squared", "Alpha", "Beta", "CEUpdatesEmbedding", "CMLTau"}
	case "sem":
		return []string{"K", "SEMK"}
	case "atfl":
		return []string{"K", "ATFLSteps"}
	case "ascc":
		return []string{"K", "ASCCSteps", "ASCCLR", "ASCCEntropy", "ASCCBeta"}
	case "ibp":
		return []string{"K", "IBPKappa", "IBPEps", "IBPHull"}
	case "advt", "iadvt", "spgd", "fgm", "pgd":
		return []string{map[string]string{"advt": "AdvT", "iadvt": "IAdvT", "spgd": "SPGD", "fgm": "FGM", "pgd": "PGD"}[name]}
	case "freelb":
		return []string{"FreeLB"}
	case "carl":
		return []string{"FreeLB", "CARL"}
	case "rar":
		return []string{"FreeLB", "RAR"}
	}
	return nil
}

// ftmlConfig is FTML's and CML's configuration of s over syn.
func (s Settings) ftmlConfig(syn *SynonymTable) FTMLConfig {
	cfg := DefaultFTMLConfig(syn)
	cfg.K, cfg.P, cfg.Squared, cfg.Alpha, cfg.Beta, cfg.CEUpdatesEmbedding = s.K, s.Norm, s.Squared, s.Alpha, s.Beta, s.CEUpdatesEmbedding
	return cfg
}

// Validate checks every setting's range (those of defenses not used too:
// their defaults are valid); FTML's and CML's with FTMLConfig.Validate.
func (s Settings) Validate() error {
	cfg := s.ftmlConfig(NewSynonymTableIDs(nil))
	if err := cfg.Validate(); err != nil {
		return err
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !finite(s.CMLTau) || s.CMLTau <= 0:
		return fmt.Errorf("defense: cml tau %g must be positive", s.CMLTau)
	case s.SEMK < 0, s.ATFLSteps < 0, s.ASCCSteps < 0:
		return fmt.Errorf("defense: sem k %d, atfl steps %d and ascc steps %d must be ≥ 0", s.SEMK, s.ATFLSteps, s.ASCCSteps)
	case !finite(s.ASCCLR) || s.ASCCLR <= 0 || !finite(s.ASCCEntropy) || s.ASCCEntropy < 0 || !finite(s.ASCCBeta) || s.ASCCBeta < 0:
		return fmt.Errorf("defense: ascc lr %g must be positive, entropy %g and beta %g ≥ 0", s.ASCCLR, s.ASCCEntropy, s.ASCCBeta)
	case !finite(s.IBPKappa) || s.IBPKappa < 0 || s.IBPKappa > 1 || !finite(s.IBPEps) || s.IBPEps < 0:
		return fmt.Errorf("defense: ibp kappa %g must be in [0, 1], eps %g ≥ 0", s.IBPKappa, s.IBPEps)
	}
	if err := s.FreeLB.Validate(); err != nil {
		return err
	}
	carl, rar := s.CARL, s.RAR
	carl.FreeLB, rar.FreeLB = s.FreeLB, s.FreeLB
	if err := carl.Validate(); err != nil {
		return err
	}
	if err := rar.Validate(); err != nil {
		return err
	}
	for _, c := range []AdvTextConfig{s.AdvT, s.IAdvT, s.SPGD, s.FGM, s.PGD} {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	_, err := ParseHull(string(s.IBPHull))
	return err
}

// NewObjective builds the training objective of the synonym-based defense
// name (Defense.Synonyms) with settings s over the synonym table syn;
// table is the model's initial embedding table, from which FTML and CML
// measure α0 when s.Alpha is 0. An embedding-space defense
// (Defense.Embedding) needs neither: its settings are s's AdvT, IAdvT or
// SPGD.
func NewObjective(name string, s Settings, syn *SynonymTable, table *tensor.Tensor) (train.Objective, error) {
	d, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	switch name {
	case "freelb":
		return NewFreeLB(s.FreeLB)
	case "carl":
		c := s.CARL
		c.FreeLB = s.FreeLB
		return NewCARL(c)
	case "rar":
		c := s.RAR
		c.FreeLB = s.FreeLB
		return NewRAR(c)
	}
	if d.Embedding {
		c := map[string]AdvTextConfig{MethodAdvT: s.AdvT, MethodIAdvT: s.IAdvT, MethodSPGD: s.SPGD, MethodFGM: s.FGM, MethodPGD: s.PGD}[name]
		c.Method = name
		return NewAdvText(c)
	}
	if !d.Synonyms {
		return nil, fmt.Errorf("defense %s is not built over a synonym table (standard: train.Standard; flat, adv: attack rounds)", name)
	}
	if syn == nil {
		return nil, errors.New("defense: no synonym table")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	switch name {
	case "ftml", "cml":
		cfg := s.ftmlConfig(syn)
		if table != nil {
			cfg.InitAlpha(table)
		}
		if name == "cml" {
			c, err := NewCML(cfg, s.CMLTau)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
		f, err := NewFTML(cfg)
		if err != nil {
			return nil, err
		}
		return f, nil
	case "sem":
		return NewSEMNearest(syn, s.SEMK), nil
	case "atfl":
		a := NewATFL(syn)
		a.MaxSteps, a.K = s.ATFLSteps, s.K
		return a, nil
	case "ascc":
		a := NewASCC(syn)
		a.K, a.Steps, a.LR, a.EntropyWeight, a.Beta = s.K, s.ASCCSteps, s.ASCCLR, s.ASCCEntropy, s.ASCCBeta
		return a, nil
	case "ibp":
		p := NewIBP(syn)
		p.K, p.KappaMax, p.EpsMax, p.Hull = s.K, s.IBPKappa, s.IBPEps, s.IBPHull
		return p, nil
	}
	return nil, fmt.Errorf("defense %s: no objective builder", name)
}
