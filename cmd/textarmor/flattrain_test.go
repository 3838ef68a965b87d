package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/model"
)

// TestTrainFLATAndAdv trains --defense flat and adv end to end on a
// generated task, attacking with textfooler over generated synonyms.
func TestTrainFLATAndAdv(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	common := []string{"--train", tr, "--dev", dv, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "2", "--rounds", "2", "--round-epochs", "1", "--round-examples", "60", "--batch", "32",
		"--round-attack", "textfooler", "--synonyms", syn, "--wordnet", filepath.Join(dir, "no-wordnet"), "--round-workers", "2", "--quiet"}
	for _, def := range []string{"flat", "adv"} {
		out := filepath.Join(dir, def)
		args := append([]string{"train", "--defense", def, "--out", out}, common...)
		if def == "flat" {
			args = append(args, "--flat-beta", "0.1", "--flat-gamma", "0.001")
		}
		code, _, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", def, code, stderr)
		}
		t.Logf("%s:\n%s", def, stderr)
		for _, want := range []string{"round 1 attack:", "round 2:", "learning rate"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", def, want, stderr)
			}
		}
		mdl, err := model.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		meta := mdl.Meta
		tr := meta.Training
		if tr["defense"] != def || tr["adversarial_deviations"] == nil {
			t.Errorf("%s: training record %v", def, tr)
		}
		wantLR := map[string]float64{"flat": 0.005, "adv": 0.01}[def]
		if tr["lr"] != wantLR {
			t.Errorf("%s: lr %v, want %v", def, tr["lr"], wantLR)
		}
		if meta.Net.Mask != (def == "flat") {
			t.Errorf("%s: mask %v", def, meta.Net.Mask)
		}
		sched, _ := tr["adversarial_rounds"].(map[string]any)
		if sched["attack"] != "textfooler" || sched["rounds"] != 2.0 || sched["adv_per_round"] != 60.0 {
			t.Errorf("%s: schedule record %v", def, sched)
		}
		if st, _ := tr["round_stats"].([]any); len(st) != 2 {
			t.Errorf("%s: round stats %v", def, tr["round_stats"])
		}
		if fl, _ := tr["flat"].(map[string]any); def == "flat" && (fl["beta"] != 0.1 || fl["gamma"] != 0.001 || fl["entropy_reduction"] != "mean") {
			t.Errorf("flat objective record %v", tr["flat"])
		}
	}

	// FLAT flags with another defense, and a bad attack name.
	for _, bad := range [][]string{
		{"--defense", "standard", "--flat-beta", "0.1"},
		{"--defense", "adv", "--flat-gamma", "0.1"},
		{"--defense", "ftml", "--rounds", "3"},
		{"--defense", "flat", "--round-attack", "ga"},
		{"--defense", "adv", "--flat-entropy-reduction", "sum"},
		{"--defense", "flat", "--flat-entropy-reduction", "max"},
	} {
		args := append([]string{"train", "--train", tr, "--out", filepath.Join(dir, "bad")}, bad...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", bad, code, stderr)
		}
	}
}

// The rounds' flags before their flat- and round- prefixes still work,
// with a note, and are left out of --help; the checks name the new flag.
func TestRenamedRoundFlags(t *testing.T) {
	dir, tr, _, _ := sentimentFiles(t)
	code, _, stderr := runCmd(t, "train", "--train", tr, "--out", filepath.Join(dir, "bad"), "--defense", "adv", "--beta", "0.1")
	if code != 2 || !strings.Contains(stderr, "note: --beta is now --flat-beta") || !strings.Contains(stderr, "--flat-beta needs --defense flat") {
		t.Errorf("--beta with adv: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCmd(t, "train", "--train", tr, "--out", filepath.Join(dir, "bad"), "--defense", "flat", "--adv-per-round", "-1")
	if code != 2 || !strings.Contains(stderr, "--round-examples -1 must be") {
		t.Errorf("--adv-per-round -1: exit %d: %s", code, stderr)
	}
	_, _, help := runCmd(t, "train", "--help")
	for old, name := range renamedFlags {
		if strings.Contains(help, "--"+old+" ") || strings.Contains(help, "--"+old+"\n") || !strings.Contains(help, "--"+name) {
			t.Errorf("help shows --%s or lacks --%s", old, name)
		}
	}
}

// --prob-inputs-to-ce (spec F9, the reference's double softmax) trains the
// FLAT reference's objectives, is recorded with the model, and is refused
// with the others.
func TestTrainProbInputsToCE(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	out := filepath.Join(dir, "std")
	code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "2", "--batch", "32", "--prob-inputs-to-ce", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mdl, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := mdl.Meta.Training["standard"].(map[string]any); rec["prob_inputs_to_ce"] != true {
		t.Errorf("training record lacks the double softmax: %v", mdl.Meta.Training)
	}
	for _, bad := range [][]string{{"--defense", "ftml", "--synonyms", syn}, {"--defense", "ibp", "--synonyms", syn}} {
		args := append([]string{"train", "--train", tr, "--out", filepath.Join(dir, "bad"), "--prob-inputs-to-ce"}, bad...)
		if code, _, stderr := runCmd(t, args...); code != 2 || !strings.Contains(stderr, "--prob-inputs-to-ce needs --defense standard, adv or flat") {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}
