package main

import (
	"fmt"
	"strconv"
	"strings"
)

// seedsFlag is --seeds of the table benches: a count N (instances 0..N-1)
// or a comma-separated list of instance offsets (0,1,2); "" is one
// instance, today's single-seed table.
type seedsFlag struct{ seeds []int64 }

func (f *seedsFlag) String() string {
	var parts []string
	for _, s := range f.seeds {
		parts = append(parts, strconv.FormatInt(s, 10))
	}
	return strings.Join(parts, ",")
}

func (f *seedsFlag) Set(v string) error {
	seeds, err := parseSeeds(v)
	if err != nil {
		return err
	}
	f.seeds = seeds
	return nil
}

// parseSeeds reads --seeds: "3" is 0,1,2; "0,4,5" those offsets.
func parseSeeds(v string) ([]int64, error) {
	if !strings.Contains(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is neither a count ≥ 1 nor a list of seed offsets like 0,1,2", v)
		}
		seeds := make([]int64, n)
		for i := range seeds {
			seeds[i] = int64(i)
		}
		return seeds, nil
	}
	var seeds []int64
	for _, part := range strings.Split(v, ",") {
		s, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || s < 0 {
			return nil, fmt.Errorf("%q: %q is not a seed offset ≥ 0", v, part)
		}
		seeds = append(seeds, s)
	}
	return seeds, nil
}
