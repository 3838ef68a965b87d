package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Shards of an evaluation merge into exactly the single run's --json
// result; shards of different runs, a missing shard or shards out of order
// are refused.
func TestEvalShardsMerge(t *testing.T) {
	dir := t.TempDir()
	_, _, mdir := attackFixture(t, dir)
	te := filepath.Join(dir, "big.csv")
	writeCSV(t, te, 700, 5) // three forward blocks of 256
	other := filepath.Join(dir, "other.csv")
	writeCSV(t, other, 600, 6)
	eval := func(file string, extra ...string) string {
		t.Helper()
		code, stdout, stderr := runCmd(t, append([]string{"eval", "--model", mdir, "--test", file}, extra...)...)
		if code != 0 {
			t.Fatalf("eval %v: exit %d: %s", extra, code, stderr)
		}
		return stdout
	}
	read := func(p string) string {
		t.Helper()
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	single := filepath.Join(dir, "single.json")
	printed := eval(te, "--json", "--out", single)
	if read(single) != printed {
		t.Fatalf("--out %q differs from --json %q", read(single), printed)
	}
	var shards []string
	for i, s := range []string{"0/3", "1/3", "2/3"} {
		p := filepath.Join(dir, "s"+string(rune('0'+i))+".json")
		if out := eval(te, "--shard", s, "--out", p); !strings.Contains(out, "shard "+s) {
			t.Errorf("shard %s output %q", s, out)
		}
		shards = append(shards, p)
	}
	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := runCmd(t, "merge", "--out", merged, shards[0], shards[1], shards[2])
	if code != 0 || !strings.Contains(stdout, "700 texts from 3 shards") {
		t.Fatalf("merge: exit %d: %s %s", code, stdout, stderr)
	}
	if read(merged) != printed {
		t.Errorf("merged %s\nwant the single run's %s", read(merged), printed)
	}

	o1 := filepath.Join(dir, "o1.json")
	eval(other, "--shard", "1/3", "--out", o1)
	for name, c := range map[string]struct {
		files []string
		want  string
	}{
		"order":     {[]string{shards[1], shards[0], shards[2]}, "needs shard 0/3"},
		"missing":   {[]string{shards[0], shards[1]}, "needs shard 0/2"},
		"other run": {[]string{shards[0], o1, shards[2]}, "another run"},
	} {
		code, _, stderr := runCmd(t, append([]string{"merge", "--out", filepath.Join(dir, "bad.json")}, c.files...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", name, code, stderr, c.want)
		}
	}
	for _, args := range [][]string{{"--shard", "0/2"}, {"--shard", "3/3", "--out", "x"}, {"--shard", "0/2", "--out", "x", "--certify"}} {
		if code, _, stderr := runCmd(t, append([]string{"eval", "--model", mdir, "--test", te}, args...)...); code != 2 {
			t.Errorf("eval %v: exit %d, want 2 (usage): %s", args, code, stderr)
		}
	}
}
