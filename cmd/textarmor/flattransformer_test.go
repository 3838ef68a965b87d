package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/model"
)

// TestTrainFLATTransformer: `train --init DIR --model transformer --defense
// flat` on a tiny generated checkpoint and task (1 clean epoch, 1 round of
// 1 epoch over 40 attacked examples): the model gains a word mask on its
// input states, the round's pairs are compared word by word, the learning
// rate stays fine-tuning's, and the result evaluates, explains and is
// refused by the Hugging Face export.
func TestTrainFLATTransformer(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	hf := tinyHF(t, dir)
	out := filepath.Join(dir, "flat")
	code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf, "--defense", "flat",
		"--epochs", "1", "--lr", "3e-3", "--batch", "16", "--rounds", "1", "--round-epochs", "1", "--round-examples", "40",
		"--synonyms", syn, "--wordnet", filepath.Join(dir, "no-wordnet"), "--round-workers", "2", "--out", out)
	if code != 0 {
		t.Fatalf("train --init --defense flat: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"adamw lr 0.003", "flat: word mask of width 400 on the input states", "removed from the attention keys", "L_imp over words", "round 1:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	m, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Training
	if m.Net.StateMasked() == nil || m.Pieces == nil || rec["defense"] != "flat" || rec["lr"] != 3e-3 {
		t.Fatalf("model: mask %v, pieces %v, training record %v", m.Net.Mask != nil, m.Pieces != nil, rec)
	}
	if fl, _ := rec["flat"].(map[string]any); fl["imp_words"] != "max over pieces" || fl["beta"] != 0.1 {
		t.Errorf("flat objective record %v", rec["flat"])
	}
	raw, _ := json.Marshal(rec["round_stats"])
	var stats []struct {
		Changed  int `json:"changed"`
		GapPairs int `json:"importance_gap_pairs"`
	}
	if json.Unmarshal(raw, &stats) != nil || len(stats) != 1 || stats[0].Changed == 0 || stats[0].GapPairs == 0 {
		t.Errorf("round stats %s", raw)
	}
	// Substitution counts are words, not pieces.
	for w := range rec["substitution_counts"].(map[string]any) {
		if strings.HasPrefix(w, "##") || strings.Contains(w, " ") || w == "" {
			t.Errorf("substitution count of %q", w)
		}
	}
	if acc := accuracyOf(t, out, dv); acc < 0 || acc > 1 {
		t.Errorf("accuracy %v", acc)
	}
	code, stdout, stderr := runCmd(t, "explain", "--model", out, "--method", "ig", "--json", "a good and excellent film")
	if code != 0 || !strings.Contains(stdout, `"scores"`) {
		t.Errorf("explain: exit %d: %s %s", code, stdout, stderr)
	}
	code, _, stderr = runCmd(t, "export", "--model", out, "--format", "hf", "--out", filepath.Join(dir, "exported"))
	if code == 0 || !strings.Contains(stderr, "word mask") {
		t.Errorf("export of a FLAT transformer: exit %d: %s", code, stderr)
	}
}
