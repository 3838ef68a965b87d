package retrofit

import (
	"math"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

func setup(t *testing.T) (*text.Vocab, [][]int32) {
	t.Helper()
	vocab, err := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "fine", "nice", "bad", "awful", "table", "oov"})
	if err != nil {
		t.Fatal(err)
	}
	syn := lexicon.NewNeighbors("test")
	syn.Set("good", []string{"fine", "nice", "missing"}) // "missing" is not in the vocabulary
	syn.Set("bad", []string{"awful"})
	syn.Set("table", []string{"table"}) // a self loop is ignored
	return vocab, lexicon.VocabGraph(syn, vocab)
}

func TestApplyPullsSynonymsTogether(t *testing.T) {
	vocab, g := setup(t)
	const dim = 50
	rng := rand.New(rand.NewSource(1))
	table := make([]float32, vocab.Len()*dim)
	for i := dim * 2; i < len(table); i++ {
		table[i] = float32(rng.Float64()*0.5 - 0.25)
	}
	orig := append([]float32(nil), table...)
	if err := Apply(table, dim, g, 10, 1); err != nil {
		t.Fatal(err)
	}
	row := func(tb []float32, w string) []float32 { i := int(vocab.ID(w)); return tb[i*dim : (i+1)*dim] }
	for _, p := range [][2]string{{"good", "fine"}, {"good", "nice"}, {"bad", "awful"}} {
		before, after := tensor.Cosine(row(orig, p[0]), row(orig, p[1])), tensor.Cosine(row(table, p[0]), row(table, p[1]))
		if after < 0.5 || after < before+0.3 {
			t.Fatalf("%v: cosine %.3f before, %.3f after", p, before, after)
		}
	}
	if c := tensor.Cosine(row(table, "good"), row(table, "bad")); math.Abs(c) > 0.5 {
		t.Fatalf("unrelated words became similar: cosine %.3f", c)
	}
	for _, w := range []string{"table", "oov", text.PadWord} {
		a, b := row(orig, w), row(table, w)
		for d := range a {
			if a[d] != b[d] {
				t.Fatalf("%s has no neighbours but changed", w)
			}
		}
	}
	// One sweep is exactly the paper's update from the original vectors.
	one := append([]float32(nil), orig...)
	if err := Apply(one, dim, g, 1, 1); err != nil {
		t.Fatal(err)
	}
	b, a := row(orig, "bad"), row(orig, "awful")
	for d := 0; d < dim; d++ {
		if want := (b[d] + a[d]) / 2; math.Abs(float64(row(one, "bad")[d]-want)) > 1e-6 {
			t.Fatalf("one sweep: %g, want %g", row(one, "bad")[d], want)
		}
	}
}

func TestApplyRejectsBadShapes(t *testing.T) {
	_, g := setup(t)
	if err := Apply(make([]float32, 7), 3, g, 1, 1); err == nil {
		t.Fatal("accepted a table of the wrong size")
	}
	if err := Apply(make([]float32, len(g)*2), 2, g, 1, 0); err == nil {
		t.Fatal("accepted alpha 0")
	}
}
