package defense

import (
	"math"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// TestRegistryBuildsEveryObjective: every synonym-based defense of the
// registry builds, with the default settings, the objective of its name;
// the others are refused with the reason.
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
		if !d.Synonyms {
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
		"alpha":   func(s *Settings) { s.Alpha = math.NaN() },
		"tau":     func(s *Settings) { s.CMLTau = 0 },
		"semk":    func(s *Settings) { s.SEMK = -1 },
		"asccLR":  func(s *Settings) { s.ASCCLR = 0 },
		"kappa":   func(s *Settings) { s.IBPKappa = 1.5 },
		"ibpHull": func(s *Settings) { s.IBPHull = "box" },
	} {
		s := DefaultSettings()
		edit(&s)
		if s.Validate() == nil {
			t.Errorf("%s: out-of-range setting accepted", name)
		}
	}
}
