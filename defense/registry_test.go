package defense

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// TestRegistryBuildsEveryObjective: every synonym-based and
// embedding-space defense of the registry builds, with the default
// settings, the objective of its name; the others are refused with the
// reason.
func TestRegistryBuildsEveryObjective(t *testing.T) {
	syn := NewSynonymTableIDs([][]int32{nil, nil, {3}, {2}, nil})
	table := tensor.New(5, 4)
	for i := range table.Data {
		table.Data[i] = float32(i%7) / 7
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("default settings: %v", err)
	}
	for _, d := range Defenses() {
		obj, err := NewObjective(d.Name, DefaultSettings(), syn, table)
		if !d.Synonyms && !d.Embedding {
			if err == nil {
				t.Errorf("%s: built over a synonym table, but it is not that kind of defense", d.Name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if obj.Name() != d.Name {
			t.Errorf("%s builds objective %q", d.Name, obj.Name())
		}
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "ftml") {
		t.Fatalf("unknown defense: %v", err)
	}
}

func TestSettingsValidate(t *testing.T) {
	for name, edit := range map[string]func(*Settings){
		"k":       func(s *Settings) { s.K = 0 },
		"norm":    func(s *Settings) { s.Norm = 3 },
		"squared": func(s *Settings) { s.Squared, s.Norm = true, 1 },
		"alpha":   func(s *Settings) { s.Alpha = math.NaN() },
		"tau":     func(s *Settings) { s.CMLTau = 0 },
		"semk":    func(s *Settings) { s.SEMK = -1 },
		"asccLR":  func(s *Settings) { s.ASCCLR = 0 },
		"kappa":   func(s *Settings) { s.IBPKappa = 1.5 },
		"ibpHull": func(s *Settings) { s.IBPHull = "box" },
		"advtEps": func(s *Settings) { s.AdvT.Eps = 0 },
		"spgdSig": func(s *Settings) { s.SPGD.Sigma = 1 },
		"iadvtK":  func(s *Settings) { s.IAdvT.K = 0 },
		"rarW":    func(s *Settings) { s.RAR.Weight = -1 },
		"freelbN": func(s *Settings) { s.FreeLB.N = 0 }, // CARL's and RAR's too
		"carlTau": func(s *Settings) { s.CARL.Tau = 0 },
	} {
		s := DefaultSettings()
		edit(&s)
		if s.Validate() == nil {
			t.Errorf("%s: out-of-range setting accepted", name)
		}
	}
}

// TestIBPPrepare: the ramp spans the given epochs, or by default the first
// two thirds of the run, in optimiser steps (batches rounded up).
func TestIBPPrepare(t *testing.T) {
	cfg := nn.DefaultConfig("cnn")
	cfg.VocabSize, cfg.NumClasses, cfg.EmbedDim, cfg.Filters = 10, 2, 4, 2
	net, err := nn.New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	p := NewIBP(NewSynonymTableIDs(make([][]int32, 10)))
	if err := p.Prepare(net, 100, 60, 32, -1); err != nil || p.RampSteps != 40*4 {
		t.Fatalf("default ramp: %d steps, %v; want 160", p.RampSteps, err)
	}
	if err := p.Prepare(net, 100, 60, 32, 3); err != nil || p.RampSteps != 12 {
		t.Fatalf("3-epoch ramp: %d steps, %v; want 12", p.RampSteps, err)
	}
}
