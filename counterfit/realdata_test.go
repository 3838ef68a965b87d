package counterfit

import (
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/internal/realdata"
	"github.com/textarmor/textarmor/text"
)

// The real constraint files parse to their line counts (the README counts
// newlines; two files lack a final one), and SimLex-999 (CRLF, a header)
// scores all its pairs.
func TestRealConstraints(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "counter-fitting-constraints")
	for name, lines := range map[string]int{"ppdb_synonyms.txt": 53809, "ppdb_antonyms.txt": 638, "wordnet_antonyms.txt": 12574} {
		ps, err := ReadPairs(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != lines {
			t.Errorf("%s: %d pairs, want %d", name, len(ps), lines)
		}
	}
	simlex := filepath.Join(dir, "SimLex-999.txt")
	ps, err := ReadPairs(simlex)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{text.PadWord, text.UnkWord}
	seen := map[string]bool{}
	for _, p := range ps[1:] { // after the header
		for _, w := range p {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	vocab, err := text.NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	vs := &text.Vectors{Dim: 8, Data: make([]float32, 8*len(words)), Found: make([]bool, len(words))}
	for id := 2; id < len(words); id++ {
		vs.Found[id] = true
		for d := range 8 {
			vs.Data[8*id+d] = float32(rng.NormFloat64())
		}
	}
	rho, n, err := SimLex(simlex, vs, vocab)
	if err != nil {
		t.Fatal(err)
	}
	// Random vectors know nothing of similarity.
	if n != 999 || math.IsNaN(rho) || math.Abs(rho) > 0.15 {
		t.Errorf("random vectors: ρ %v over %d pairs, want about 0 over 999", rho, n)
	}
}
