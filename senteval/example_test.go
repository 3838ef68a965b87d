package senteval_test

import (
	"fmt"
	"math"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/senteval"
)

// angles embeds a text as the unit vector at the angle (in degrees) the
// text names.
type angles map[string]float64

func (a angles) Embed(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		r := a[s] * math.Pi / 180
		out[i] = []float32{float32(math.Cos(r)), float32(math.Sin(r))}
	}
	return out, nil
}

// An STS year is scored as one set: the subsets below rank their pairs
// perfectly on their own, but not against each other, which the mean of
// their correlations hides and SentEval's "all" setting shows.
func ExampleSTSAll() {
	e := angles{"o": 0, "a": 10, "b": 20, "c": 30, "d": 60, "f": 70, "g": 80}
	year := []senteval.Group{
		{Name: "sts/one", Pairs: []dataset.SimPair{{A: "o", B: "a", Score: 3}, {A: "o", B: "b", Score: 2}, {A: "o", B: "c", Score: 1}}},
		{Name: "sts/two", Pairs: []dataset.SimPair{{A: "o", B: "d", Score: 5}, {A: "o", B: "f", Score: 4}, {A: "o", B: "g", Score: 0.5}}},
	}
	all, each, err := senteval.STSAll(e, year)
	if err != nil {
		panic(err)
	}
	fmt.Printf("subsets %.2f and %.2f, their mean %.2f; all %.2f over %d pairs\n", each[0].Spearman, each[1].Spearman, all.SubsetMean, all.Spearman, all.N)
	// Output: subsets 100.00 and 100.00, their mean 100.00; all 14.29 over 6 pairs
}
