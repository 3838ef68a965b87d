package dataset_test

import (
	"fmt"

	"github.com/textarmor/textarmor/dataset"
)

func ExampleStratifiedSplit() {
	var all []dataset.Example
	for i := 0; i < 100; i++ {
		all = append(all, dataset.Example{Text: fmt.Sprint("text ", i), Label: i % 4 / 3}) // 75 / 25
	}
	rest, test := dataset.StratifiedSplit(all, 0.2, 1)
	n := map[int]int{}
	for _, e := range test {
		n[e.Label]++
	}
	fmt.Println(len(rest), len(test), n[0], n[1])
	// Output: 80 20 15 5
}
