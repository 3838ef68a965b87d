package senteval

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"sync"
)

// KFold splits the rows 0..len(labels)−1 into k stratified folds and
// returns each fold's rows in increasing order; the folds partition the
// rows. The recipe: for labels in increasing order, one math/rand source
// seeded with seed draws a permutation of that label's rows (in row
// order); the permuted rows of all labels, one label after the other, are
// dealt to the folds in turn (position p to fold p mod k). So every fold
// holds ⌊c/k⌋ or ⌈c/k⌉ rows of a label with c rows, and the fold sizes
// differ by at most one. Same labels, k and seed: same folds.
func KFold(labels []int, k int, seed int64) ([][]int, error) {
	if k < 2 || k > len(labels) {
		return nil, fmt.Errorf("senteval: %d folds of %d rows: want 2 ≤ k ≤ rows", k, len(labels))
	}
	byLabel := map[int][]int{}
	for i, l := range labels {
		byLabel[l] = append(byLabel[l], i)
	}
	keys := make([]int, 0, len(byLabel))
	for l := range byLabel {
		keys = append(keys, l)
	}
	slices.Sort(keys)
	rng := rand.New(rand.NewSource(seed))
	folds := make([][]int, k)
	p := 0
	for _, l := range keys {
		rows := byLabel[l]
		for _, j := range rng.Perm(len(rows)) {
			folds[p%k] = append(folds[p%k], rows[j])
			p++
		}
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds, nil
}

// without returns the rows of all folds but fold k, in increasing order.
func without(folds [][]int, k int) []int {
	var out []int
	for j, f := range folds {
		if j != k {
			out = append(out, f...)
		}
	}
	slices.Sort(out)
	return out
}

// holdOut splits rows into a training part and a validation part of about
// a tenth, stratified by label: the validation part is fold 0 of
// KFold(labels of rows, 10, seed).
func holdOut(rows, y []int, seed int64) (train, valid []int, err error) {
	labels := make([]int, len(rows))
	for i, r := range rows {
		labels[i] = y[r]
	}
	folds, err := KFold(labels, 10, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("senteval: holding out a validation tenth: %w", err)
	}
	for _, i := range folds[0] {
		valid = append(valid, rows[i])
	}
	for _, i := range without(folds, 0) {
		train = append(train, rows[i])
	}
	return train, valid, nil
}

// parallel runs job(0) … job(n−1) on up to workers goroutines (0 =
// GOMAXPROCS) and returns the error of the lowest-numbered failed job.
func parallel(n, workers int, job func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = job(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
