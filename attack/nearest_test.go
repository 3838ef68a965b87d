package attack

import (
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
)

// TestRecipesWithNearest: the paper-protocol textfooler, ga, pso, iga and hla take
// their substitutes from a NearestSet when given one, and list a deviation
// only when its parameters are not the paper's; FTML keeps the synonyms S.
func TestRecipesWithNearest(t *testing.T) {
	_, syn, _ := oneWord()
	nb := lexicon.NewNeighbors("knn")
	nb.Set("good", []string{"fine"})
	source := func(c *Configured) string { return c.Transformation.(WordSwap).Source.Name() }
	cases := []struct {
		recipe   string
		k        int
		cos      float64
		noSubDev bool
	}{
		{"textfooler", 50, 0.5, true},
		{"textfooler", 20, 0.5, false},
		{"ga", 8, 0.75, true},
		{"ga", 50, 0.5, false},
		{"pso", 50, 0.5, false}, // HowNet is the paper's
		{"iga", 50, 0.75, true},
		{"iga", 8, 0.75, false},
		{"hla", 50, 0.5, true},
		{"hla", 8, 0.75, false},
	}
	for _, tc := range cases {
		rc, _ := LookupRecipe(tc.recipe)
		ns := &NearestSet{Source: nb, K: tc.k, MinCos: tc.cos, Vectors: "v.txt"}
		c, err := rc.Build(ProtocolPaper, Resources{Nearest: ns, Encoder: bowEncoder{}})
		if err != nil {
			t.Fatalf("%s without synonyms: %v", tc.recipe, err)
		}
		if source(c) != "knn" {
			t.Errorf("%s: substitutes from %s", tc.recipe, source(c))
		}
		hasSub := strings.Contains(strings.Join(c.Deviations, "\n"), "substitutes:")
		if hasSub == tc.noSubDev {
			t.Errorf("%s k=%d cos=%g: deviations %q", tc.recipe, tc.k, tc.cos, c.Deviations)
		}
		if tc.recipe != "textfooler" {
			if _, err := rc.Build(ProtocolFTML, Resources{Nearest: ns, Encoder: bowEncoder{}}); err == nil {
				t.Errorf("%s under ftml built without the synonyms S", tc.recipe)
			}
			c, err := rc.Build(ProtocolFTML, Resources{Nearest: ns, Synonyms: syn, Encoder: bowEncoder{}})
			if err != nil || source(c) == "knn" {
				t.Errorf("%s under ftml: %v, source %v", tc.recipe, err, c)
			}
		}
	}
	rc, _ := LookupRecipe("textfooler")
	if _, err := rc.Build(ProtocolPaper, Resources{}); err == nil || !strings.Contains(err.Error(), "--vectors") {
		t.Errorf("textfooler with no substitutes: %v", err)
	}
}
