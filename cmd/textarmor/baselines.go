package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/train"
)

// baselineFlags are the hyper-parameters of the SEM, ATFL, ASCC and IBP
// baselines (spec §13 defaults).
type baselineFlags struct {
	atflSteps                     int
	asccSteps                     int
	asccLR, asccEntropy, asccBeta float64
	ibpKappa, ibpEps              float64
	ibpRamp                       int
	ibpHull                       string
	semK                          int
}

func (b *baselineFlags) register(fs *flag.FlagSet) {
	def := defense.DefaultSettings()
	fs.IntVar(&b.semK, "sem-k", def.SEMK, "sem: build the clusters from each word's N nearest synonyms (the SEM paper's 4, which the FTML paper's reproduction kept; 0 = all of the table)")
	fs.IntVar(&b.atflSteps, "atfl-steps", def.ATFLSteps, "atfl: N_max, the most FGPM substitutions per text (spec: 30/40/50 by dataset length)")
	fs.IntVar(&b.asccSteps, "ascc-steps", def.ASCCSteps, "ascc: inner maximisation steps")
	fs.Float64Var(&b.asccLR, "ascc-lr", def.ASCCLR, "ascc: inner Adam learning rate")
	fs.Float64Var(&b.asccEntropy, "ascc-entropy", def.ASCCEntropy, "ascc: weight of the entropy (sparsity) penalty")
	fs.Float64Var(&b.asccBeta, "ascc-beta", def.ASCCBeta, "ascc: weight of KL(f(x) || f(adv)) in the loss")
	fs.Float64Var(&b.ibpKappa, "ibp-kappa", def.IBPKappa, "ibp: final weight κ of the worst-case cross-entropy")
	fs.Float64Var(&b.ibpEps, "ibp-eps", def.IBPEps, "ibp: final scale ε of the synonym boxes")
	fs.StringVar(&b.ibpHull, "ibp-hull", string(def.IBPHull), "ibp: where each word's synonym box is taken: embedding (the spec's box in embedding space) or projected (after the encoder's first linear map, as Jia et al.'s code does; tighter)")
	fs.IntVar(&b.ibpRamp, "ibp-ramp-epochs", -1, "ibp: epochs over which κ and ε ramp up linearly from 0 (-1 = the first 2/3 of --epochs, the reference's 40 of 60)")
}

// numbers are the range checks of the baseline flags.
func (b *baselineFlags) numbers() []numRule {
	return []numRule{
		{b.semK >= 0, "sem-k", b.semK, "≥ 0 (0 = all of the table)"},
		{b.atflSteps >= 0, "atfl-steps", b.atflSteps, "≥ 0 (0 = no substitution)"},
		{b.asccSteps >= 0, "ascc-steps", b.asccSteps, "≥ 0 (0 = no inner maximisation)"},
		{finite(b.asccLR) && b.asccLR > 0, "ascc-lr", b.asccLR, "a positive number"},
		{finite(b.asccEntropy) && b.asccEntropy >= 0, "ascc-entropy", b.asccEntropy, "a number ≥ 0"},
		{finite(b.asccBeta) && b.asccBeta >= 0, "ascc-beta", b.asccBeta, "a number ≥ 0"},
		{finite(b.ibpKappa) && b.ibpKappa >= 0 && b.ibpKappa <= 1, "ibp-kappa", b.ibpKappa, "in [0, 1]"},
		{finite(b.ibpEps) && b.ibpEps >= 0, "ibp-eps", b.ibpEps, "a number ≥ 0"},
		{b.ibpRamp >= -1, "ibp-ramp-epochs", b.ibpRamp, "≥ 0 (-1, the default, = the first 2/3 of --epochs)"},
	}
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

// fill copies the baseline flags into the defense settings.
func (b *baselineFlags) fill(s *defense.Settings) error {
	h, err := defense.ParseHull(b.ibpHull)
	if err != nil {
		return usageError{fmt.Errorf("--ibp-hull: %v", err)}
	}
	s.SEMK, s.ATFLSteps = b.semK, b.atflSteps
	s.ASCCSteps, s.ASCCLR, s.ASCCEntropy, s.ASCCBeta = b.asccSteps, b.asccLR, b.asccEntropy, b.asccBeta
	s.IBPKappa, s.IBPEps, s.IBPHull = b.ibpKappa, b.ibpEps, h
	return nil
}

// setupRun finishes what needs the data and options: the IBP ramp length in
// optimiser steps, and the architecture check for IBP/ATFL/ASCC.
func (b *baselineFlags) setupRun(obj train.Objective, m *model.Model, trainSet []dataset.Example, opt train.Options) error {
	p, ok := obj.(*defense.IBP)
	if !ok {
		return nil
	}
	if err := p.Prepare(m.Net, len(trainSet), opt.Epochs, opt.BatchSize, b.ibpRamp); err != nil {
		return usageError{fmt.Errorf("--defense ibp: %v", err)}
	}
	return nil
}

// certify prints the certified accuracy of m on ex (IBP boxes at ε = 1,
// taken where m's IBP training took them).
func certify(w io.Writer, m *model.Model, syn *defense.SynonymTable, ex []dataset.Example, k int) (float64, error) {
	acc, err := defense.CertifiedAccuracy(m.Net, syn, train.Encode(m, ex), k, 1, trainedHull(m))
	if err != nil {
		return 0, fmt.Errorf("--certify: %v", err)
	}
	if m.Training["objective"] != "ibp" {
		fmt.Fprintf(w, "note: this model was not trained with IBP (objective %v); its certificate is usually near 0\n", m.Training["objective"])
	}
	return acc, nil
}

// trainedHull is the hull m's IBP training used (HullEmbedding for other
// models and for records from before the switch).
func trainedHull(m *model.Model) defense.Hull {
	if rec, ok := m.Training["ibp"].(map[string]any); ok {
		if s, ok := rec["hull"].(string); ok {
			if h, err := defense.ParseHull(s); err == nil {
				return h
			}
		}
	}
	return defense.HullEmbedding
}
