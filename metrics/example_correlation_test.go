package metrics_test

import (
	"errors"
	"fmt"

	"github.com/textarmor/textarmor/metrics"
)

// ExampleSpearman scores a sentence encoder as STS evaluations do: the
// Spearman correlation between the gold similarity scores and the cosine
// similarities of the pairs' embeddings. Tied values share their average
// rank (the three gold 3.8 scores all get rank 5, the two 0.80 cosines rank
// 6.5), as in scipy.stats.spearmanr: ρ = 39/√(40·41.5).
func ExampleSpearman() {
	gold := []float64{5.0, 3.8, 3.8, 2.6, 4.25, 0.5, 1.0, 3.8}
	cosine := []float64{0.91, 0.80, 0.72, 0.55, 0.80, 0.10, 0.35, 0.60}
	rho, p, err := metrics.Spearman(gold, cosine)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("Spearman rho = %.4f (p = %.2e)\n", rho, p)
	r, _, _ := metrics.Pearson(gold, cosine)
	fmt.Printf("Pearson r = %.4f\n", r)

	// A model that gives every pair the same similarity has no defined
	// correlation: an error, not NaN.
	_, _, err = metrics.Spearman(gold, []float64{1, 1, 1, 1, 1, 1, 1, 1})
	fmt.Println(errors.Is(err, metrics.ErrPearsonUndefined))
	// Output:
	// Spearman rho = 0.9572 (p = 1.90e-04)
	// Pearson r = 0.9640
	// true
}
