package senteval

import (
	"math"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
)

// charEmbedder embeds a text as its letter counts: similar spellings, high
// cosine. It counts how many texts it is asked for.
type charEmbedder struct{ asked int }

func (c *charEmbedder) Embed(texts []string) ([][]float32, error) {
	c.asked += len(texts)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 26)
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestSTSOrdersByCosine(t *testing.T) {
	pairs := []dataset.SimPair{
		{A: "abc", B: "abc", Score: 5},
		{A: "abc", B: "abd", Score: 3},
		{A: "abc", B: "xyz", Score: 0},
		{A: "abc", B: "abx", Score: 2.5},
	}
	e := &charEmbedder{}
	r, err := STS(e, pairs)
	if err != nil {
		t.Fatal(err)
	}
	// Cosines 1, 2/3, 0, 2/3: the ranks agree except for the tie.
	if r.N != 4 || math.Abs(r.Spearman-94.868) > 0.01 {
		t.Errorf("result %+v", r)
	}
	if e.asked != 4 {
		t.Errorf("embedded %d texts, want the 4 distinct ones", e.asked)
	}
	if _, err := STS(e, pairs[:2]); err == nil {
		t.Error("two pairs accepted")
	}
	same := []dataset.SimPair{{A: "a", B: "a", Score: 1}, {A: "b", B: "b", Score: 2}, {A: "c", B: "c", Score: 3}}
	if _, err := STS(e, same); err == nil {
		t.Error("constant similarities gave a correlation")
	}
}
