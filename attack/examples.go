package attack

import (
	"github.com/textarmor/textarmor/dataset"
)

// SampleOrder picks the examples of a split of size examples to attack:
// the first n, or (shuffle) the first n of a permutation seeded by seed,
// the FTML protocol's sample. n ≤ 0 takes them all.
func SampleOrder(size, n int, seed int64, shuffle bool) []int {
	if shuffle {
		return dataset.SeededOrder(size, n, seed)
	}
	if n <= 0 || n > size {
		n = size
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}

// ExamplesOf turns the examples of split at the indices of order (nil:
// all, in order) into attack examples, each identified, and its attack
// seeded, by its index in the split. A sentence pair is attacked in its
// second text (Text2: an NLI hypothesis, MRPC's second sentence), its
// first text fixed.
func ExamplesOf(split []dataset.Example, order []int) []Example {
	if order == nil {
		order = SampleOrder(len(split), 0, 0, false)
	}
	out := make([]Example, len(order))
	for k, i := range order {
		e := split[i]
		out[k] = Example{Index: i, Text: e.Text, Label: e.Label}
		if e.Text2 != "" {
			out[k].Text, out[k].Fixed = e.Text2, e.Text
		}
	}
	return out
}
