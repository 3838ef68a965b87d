package metrics_test

import (
	"fmt"

	"github.com/textarmor/textarmor/metrics"
)

// Three instances of two models, attacked on the same four examples:
// which examples kept their label. The difference's SE holds both the
// examples' sampling error and the instances' spread.
func ExamplePairedSeeds() {
	a := []map[int]bool{
		{0: true, 1: true, 2: true, 3: false},
		{0: true, 1: true, 2: false, 3: false},
		{0: true, 1: true, 2: true, 3: true},
	}
	b := []map[int]bool{
		{0: true, 1: false, 2: false, 3: false},
		{0: false, 1: false, 2: false, 3: false},
		{0: true, 1: true, 2: true, 3: false},
	}
	e, _ := metrics.PairedSeeds(a, b)
	s := e.Spread()
	fmt.Printf("difference %.3f ± %.3f over %d seeds (per seed %.2f to %.2f)\n", e.Mean, e.SE, e.Seeds(), s.Min, s.Max)
	// Output: difference 0.417 ± 0.083 over 3 seeds (per seed 0.25 to 0.50)
}
