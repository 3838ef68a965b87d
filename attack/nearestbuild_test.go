package attack

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/text"
)

// Substitutes may come from the vectors file's words the model lacks (they
// reach it as UNK); those words get no entries of their own.
func TestNearestTakesSubstitutesOutsideTheModelVocabulary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.txt")
	os.WriteFile(path, []byte("good 1 0 0\nFine 0.9 0.1 0\nmovie 0 1 0\nfilm 0 0.95 0.1\nplot 0 0 1\n"), 0o644)
	mv, err := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "movie", "plot"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit int
		good  string
		words int
	}{{0, "[]", 5}, {1, "[fine]", 6}, {100, "[fine]", 7}} {
		v, err := text.WithVectorWords(mv, path, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if v.Len() != tc.words {
			t.Errorf("limit %d: %d words, want %d", tc.limit, v.Len(), tc.words)
		}
		vs, err := text.LoadVectors(path, v)
		if err != nil {
			t.Fatal(err)
		}
		set, err := BuildNearest(vs, v, mv.Len(), 50, 0.5, "v.txt", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(set.Source.Synonyms("good")); got != tc.good {
			t.Errorf("limit %d: substitutes of good %s, want %s", tc.limit, got, tc.good)
		}
		if n := set.Source.Synonyms("fine"); len(n) != 0 {
			t.Errorf("limit %d: fine is not a model word but has substitutes %v", tc.limit, n)
		}
	}
}
