package pipeline

import (
	"flag"

	"github.com/textarmor/textarmor/defense"
)

// EmbeddingDefenseFlags registers the embedding-space defenses' settings
// (AdvT, iAdvT, SPGD, FGM, PGD, FreeLB, CARL, RAR) on fs, writing into s. The
// FreeLB flags default to -1: the dataset's row of the paper's Table 1
// (DefenseConfig.FreeLBRow).
func EmbeddingDefenseFlags(fs *flag.FlagSet, s *defense.Settings) {
	def := defense.DefaultSettings()
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
	fs.IntVar(&s.PGD.Steps, "pgd-steps", def.PGD.Steps, "pgd: projected ascent steps")
	fs.Float64Var(&s.PGD.Step, "pgd-step", 0, "pgd: step size (0 = 2.5·ε/steps)")
	fs.IntVar(&s.SPGD.Steps, "spgd-steps", def.SPGD.Steps, "spgd: raw fast-gradient steps M before the projection")
	fs.BoolVar(&s.SPGD.KeepOne, "spgd-keep-one", false, "spgd: perturb at least one position of a short text (⌊(1−σ)T⌋ = 0 perturbs none)")
	fs.BoolVar(&s.IAdvT.LiteralIAdvT, "iadvt-literal", false, "iadvt: Sato et al.'s Eq. 6 as written (one normalisation of all weights) instead of per word, rescaled to ε")
	const row = " (-1 = the dataset's row of the paper's Table 1, --freelb-row)"
	fs.IntVar(&s.FreeLB.N, "freelb-n", -1, "freelb, carl, rar: ascent steps (forward and backward passes) per batch"+row)
	fs.Float64Var(&s.FreeLB.Alpha, "freelb-alpha", -1, "freelb, carl, rar: normalised ascent step α"+row)
	fs.Float64Var(&s.FreeLB.Gamma, "freelb-gamma", -1, "freelb, carl, rar: magnitude γ of the random start (0 = zero)"+row)
	fs.Float64Var(&s.FreeLB.Eps, "freelb-eps", -1, "freelb, carl, rar: per-example bound ε of the perturbation (0 = none, the paper's runs)"+row)
	c := &s.CARL
	fs.Float64Var(&c.Tau, "carl-tau", def.CARL.Tau, "carl: temperature τ of exp(a·x/τ)")
	fs.Float64Var(&c.Momentum, "carl-momentum", def.CARL.Momentum, "carl: memory-bank momentum M")
	fs.Float64Var(&c.Weight, "carl-weight", def.CARL.Weight, "carl: weight of the contrastive loss L_D")
	fs.IntVar(&c.Negatives, "carl-negatives", 0, "carl: negatives m per example, from other labels (0 = max(256, min(16000, ⌊0.27·N⌋)), the spec's scaling)")
	fs.IntVar(&c.StartEpoch, "carl-start-epoch", def.CARL.StartEpoch, "carl: L_D joins after this many epochs; the banks fill during the epoch before")
	fs.IntVar(&c.StartStep, "carl-start-step", 0, "carl: L_D joins at this optimiser step instead (the paper's Table 3; 0 = --carl-start-epoch)")
	fs.Float64Var(&s.RAR.Weight, "rar-weight", def.RAR.Weight, "rar: weight w_r of the reconstruction loss")
	fs.StringVar(&c.Contrast, "carl-loss", def.CARL.Contrast, "carl: contrastive loss, nce (CMC-style, Z frozen on the first batch) or infonce")
}
