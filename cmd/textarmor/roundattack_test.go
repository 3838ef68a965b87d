package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
)

// TestRoundAttackResumes interrupts `train --defense flat` inside round
// 2's attack and resumes it: only the unlogged examples are attacked again,
// round 1 is not, and the model equals an uninterrupted run's bit for bit.
func TestRoundAttackResumes(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	args := func(out string, extra ...string) []string {
		return append([]string{"train", "--defense", "flat", "--out", out, "--train", tr, "--dev", dv, "--model", "cnn",
			"--embed-dim", "16", "--filters", "8", "--epochs", "2", "--rounds", "2", "--round-epochs", "1", "--round-examples", "60",
			"--batch", "32", "--round-attack", "textfooler", "--synonyms", syn, "--wordnet", filepath.Join(dir, "no-wordnet"),
			"--round-workers", "2", "--quiet"}, extra...)
	}
	defer func() { roundAttackStop = nil }()

	whole := filepath.Join(dir, "whole")
	if code, _, stderr := runCmd(t, args(whole)...); code != 0 {
		t.Fatalf("uninterrupted: exit %d: %s", code, stderr)
	}

	cut := filepath.Join(dir, "cut")
	const stopAt = 25
	roundAttackStop = func(round, logged int) bool { return round == 2 && logged == stopAt }
	code, _, stderr := runCmd(t, args(cut)...)
	if code == 0 || !strings.Contains(stderr, "round attack stopped") {
		t.Fatalf("interrupted run: exit %d: %s", code, stderr)
	}
	log := defense.RoundJournalPath(cut, 2)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 1+stopAt {
		t.Fatalf("round 2 log has %d lines, want %d", n, 1+stopAt)
	}
	if _, err := os.Stat(defense.RoundJournalPath(cut, 1)); !os.IsNotExist(err) {
		t.Errorf("round 1's log outlived its phase: %v", err)
	}
	// A write cut short by the kill.
	f, _ := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0o666)
	f.WriteString(`{"index":40,"type":"Succ`)
	f.Close()

	attacked := map[int]int{}
	roundAttackStop = func(round, logged int) bool { attacked[round]++; return false }
	code, _, stderr = runCmd(t, args(cut, "--resume")...)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	if want := fmt.Sprintf("(%d resumed from %s)", stopAt, log); !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if attacked[1] != 0 || attacked[2] != 60-stopAt {
		t.Errorf("resumed run attacked %v, want round 2 only, %d examples", attacked, 60-stopAt)
	}
	for r := 1; r <= 2; r++ {
		if _, err := os.Stat(defense.RoundJournalPath(cut, r)); !os.IsNotExist(err) {
			t.Errorf("round %d's log left after the run: %v", r, err)
		}
	}

	a, err := model.Load(whole)
	if err != nil {
		t.Fatal(err)
	}
	b, err := model.Load(cut)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Net.Params(), b.Net.Params()
	if len(pa) != len(pb) {
		t.Fatalf("%d vs %d parameters", len(pa), len(pb))
	}
	for i := range pa {
		for j, v := range pa[i].Value.Data {
			if pb[i].Value.Data[j] != v {
				t.Fatalf("parameter %d[%d]: resumed %v, uninterrupted %v", i, j, pb[i].Value.Data[j], v)
			}
		}
	}
}
