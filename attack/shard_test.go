package attack

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readRows reads a results file's records with the seconds column blanked
// (the one field that depends on the machine).
func readRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		r[8] = ""
	}
	return recs
}

// Three shards of a run, merged, are the single run's results file (and
// its run record); shards out of order, of another run or unfinished are
// refused.
func TestShardsMergeToTheSingleRun(t *testing.T) {
	tg, syn, ex := synthTask()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Genetic{PopSize: 20, Generations: 10, Temp: 0.3, MaxSynonyms: 10}}
	dir := t.TempDir()
	id := map[string]string{"recipe": "test", "seed": "3"}
	single := filepath.Join(dir, "single.csv")
	if _, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: 2, Seed: 3, CSV: single, Identity: id}); err != nil {
		t.Fatal(err)
	}
	var shards []string
	for i := range 3 {
		p := filepath.Join(dir, "shard"+string(rune('0'+i))+".csv")
		sid := map[string]string{"recipe": "test", "seed": "3", ShardKey: string(rune('0'+i)) + "/3"}
		if _, err := RunAll(context.Background(), a, tg, ShardExamples(ex, i, 3), RunOptions{Workers: 1 + i, Seed: 3, CSV: p, Identity: sid}); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, p)
	}
	merged := filepath.Join(dir, "merged.csv")
	rs, err := MergeShards(shards, merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(ex) {
		t.Fatalf("%d merged rows for %d examples", len(rs), len(ex))
	}
	want, got := readRows(t, single), readRows(t, merged)
	if len(want) != len(got) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if strings.Join(want[i], "\x1f") != strings.Join(got[i], "\x1f") {
			t.Fatalf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
	a1, _ := os.ReadFile(single + ".run.json")
	a2, _ := os.ReadFile(merged + ".run.json")
	if string(a1) != string(a2) {
		t.Errorf("merged run record %s, want %s", a2, a1)
	}
	if _, err := MergeShards([]string{shards[1], shards[0], shards[2]}, merged); err == nil || !strings.Contains(err.Error(), "in order") {
		t.Errorf("shards out of order: %v", err)
	}
	// An unfinished shard: its last two rows gone.
	raw, err := os.ReadFile(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	if err := os.WriteFile(shards[0], []byte(strings.Join(lines[:len(lines)-3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MergeShards(shards, merged); err == nil || !strings.Contains(err.Error(), "unfinished") {
		t.Errorf("an unfinished shard: %v", err)
	}
}
