package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for in, want := range map[string][]int64{"3": {0, 1, 2}, "1": {0}, "0,4,5": {0, 4, 5}, " 2, 7": {2, 7}} {
		got, err := parseSeeds(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-2", "a", "1,-1", "1,x", ""} {
		if _, err := parseSeeds(bad); err == nil {
			t.Errorf("parseSeeds(%q): want an error", bad)
		}
	}
	// Duplicates reach the table's check, which names the flag.
	if code, _, stderr := runCmd(t, "bench", "flat-table", "--dataset", "trec", "--out", t.TempDir(), "--seeds", "1,1"); code == 0 || !strings.Contains(stderr, "--seeds: 1 is given twice") {
		t.Errorf("duplicate seeds: exit %d, %s", code, stderr)
	}
}
