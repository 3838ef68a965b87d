package main

import (
	"strings"
	"testing"
)

// Duplicate --seeds reach the table's check, which names the flag
// (parsing: cli.Seeds).
func TestSeedsFlagDuplicates(t *testing.T) {
	if code, _, stderr := runCmd(t, "bench", "flat-table", "--dataset", "trec", "--out", t.TempDir(), "--seeds", "1,1"); code == 0 || !strings.Contains(stderr, "--seeds: 1 is given twice") {
		t.Errorf("duplicate seeds: exit %d, %s", code, stderr)
	}
}
