package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/pipeline"
)

// baselineFlags are the hyper-parameters of the SEM, ATFL, ASCC and IBP
// baselines (spec §13 defaults): those given as numbers go straight into
// defense.Settings; the hull's name and the ramp are kept here.
type baselineFlags struct {
	ibpHull string
	ibpRamp int
}

func (b *baselineFlags) register(fs *flag.FlagSet, s *defense.Settings) {
	def := defense.DefaultSettings()
	fs.IntVar(&s.SEMK, "sem-k", def.SEMK, "sem: build the clusters from each word's N nearest synonyms (the SEM paper's 4, which the FTML paper's reproduction kept; 0 = all of the table)")
	fs.IntVar(&s.ATFLSteps, "atfl-steps", def.ATFLSteps, "atfl: N_max, the most FGPM substitutions per text (spec: 30/40/50 by dataset length)")
	fs.IntVar(&s.ASCCSteps, "ascc-steps", def.ASCCSteps, "ascc: inner maximisation steps")
	fs.Float64Var(&s.ASCCLR, "ascc-lr", def.ASCCLR, "ascc: inner Adam learning rate")
	fs.Float64Var(&s.ASCCEntropy, "ascc-entropy", def.ASCCEntropy, "ascc: weight of the entropy (sparsity) penalty")
	fs.Float64Var(&s.ASCCBeta, "ascc-beta", def.ASCCBeta, "ascc: weight of KL(f(x) || f(adv)) in the loss")
	fs.Float64Var(&s.IBPKappa, "ibp-kappa", def.IBPKappa, "ibp: final weight κ of the worst-case cross-entropy")
	fs.Float64Var(&s.IBPEps, "ibp-eps", def.IBPEps, "ibp: final scale ε of the synonym boxes")
	fs.StringVar(&b.ibpHull, "ibp-hull", string(def.IBPHull), "ibp: where each word's synonym box is taken: embedding (the spec's box in embedding space) or projected (after the encoder's first linear map, as Jia et al.'s code does; tighter)")
	fs.IntVar(&b.ibpRamp, "ibp-ramp-epochs", pipeline.NewDefenseConfig().IBPRampEpochs, "ibp: epochs over which κ and ε ramp up linearly from 0 (-1 = the first 2/3 of --epochs, the reference's 40 of 60)")
	for _, m := range []struct {
		c     *defense.AdvTextConfig
		d     defense.AdvTextConfig
		name  string
		neigh bool
	}{{&s.AdvT, def.AdvT, "advt", false}, {&s.IAdvT, def.IAdvT, "iadvt", true}, {&s.SPGD, def.SPGD, "spgd", true},
		{&s.FGM, def.FGM, "fgm", false}, {&s.PGD, def.PGD, "pgd", false}} {
		p := m.name + "-"
		fs.Float64Var(&m.c.Eps, p+"eps", m.d.Eps, m.name+": ε, the L2 norm of a text's perturbation of its embeddings")
		fs.Float64Var(&m.c.Lambda, p+"lambda", m.d.Lambda, m.name+": weight λ of the adversarial loss")
		if m.neigh {
			fs.IntVar(&m.c.K, p+"k", m.d.K, m.name+": nearest words per word (cosine in the model's embedding table)")
			fs.IntVar(&m.c.Refresh, p+"refresh", m.d.Refresh, m.name+": training steps between snapshots of the embedding table the neighbours come from")
		}
	}
	fs.Float64Var(&s.SPGD.Sigma, "spgd-sigma", def.SPGD.Sigma, "spgd: share σ of a text's positions whose perturbation is zeroed (the ⌊(1−σ)T⌋ with the largest raw step are kept)")
	fs.IntVar(&s.FreeLB.N, "freelb-n", def.FreeLB.N, "freelb: ascent steps (forward and backward passes) per batch")
	fs.Float64Var(&s.FreeLB.Alpha, "freelb-alpha", def.FreeLB.Alpha, "freelb: normalised ascent step α")
	fs.Float64Var(&s.FreeLB.Gamma, "freelb-gamma", def.FreeLB.Gamma, "freelb: magnitude γ of the random start (0 = zero)")
	fs.Float64Var(&s.FreeLB.Eps, "freelb-eps", def.FreeLB.Eps, "freelb: per-example bound ε of the perturbation (0 = none, the paper's runs)")
	fs.IntVar(&s.PGD.Steps, "pgd-steps", def.PGD.Steps, "pgd: projected ascent steps")
	fs.Float64Var(&s.PGD.Step, "pgd-step", 0, "pgd: step size (0 = 2.5·ε/steps)")
	fs.IntVar(&s.SPGD.Steps, "spgd-steps", def.SPGD.Steps, "spgd: raw fast-gradient steps M before the projection")
	fs.BoolVar(&s.SPGD.KeepOne, "spgd-keep-one", false, "spgd: perturb at least one position of a short text (⌊(1−σ)T⌋ = 0 perturbs none)")
	fs.BoolVar(&s.IAdvT.LiteralIAdvT, "iadvt-literal", false, "iadvt: Sato et al.'s Eq. 6 as written (one normalisation of all weights) instead of per word, rescaled to ε")
}

// checkFlag reports a defense's own flag (by its registry prefix) given
// with another defense. FTML's flags, which CML shares, are checked by
// defenseFlags.check.
func (b *baselineFlags) checkFlag(name, defenseName string) error {
	for _, d := range ownFlagDefenses() {
		if strings.HasPrefix(name, d.FlagPrefix) && defenseName != d.Name {
			return usageError{fmt.Errorf("--%s needs --defense %s", name, d.Name)}
		}
	}
	return nil
}

// ownFlagDefenses are the defenses whose flags (by their registry prefix)
// only they take: all with a prefix but FTML and CML, which share theirs.
func ownFlagDefenses() []defense.Defense {
	var out []defense.Defense
	for _, d := range defense.Defenses() {
		if p := d.FlagPrefix; p != "" && p != "ftml-" && p != "cml-" {
			out = append(out, d)
		}
	}
	return out
}
