package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/model"
)

func TestTrainFTMLAndEmbedStats(t *testing.T) {
	dir := t.TempDir()
	tr, syn := filepath.Join(dir, "train.csv"), filepath.Join(dir, "syn.json")
	writeCSV(t, tr, 300, 1)
	writeSynonyms(t, syn)
	base := []string{"train", "--train", tr, "--epochs", "2", "--embed-dim", "16", "--filters", "8", "--batch", "32", "--lr", "0.005", "--quiet"}
	for _, def := range []string{"ftml", "cml"} {
		out := filepath.Join(dir, def)
		args := append(append([]string{}, base...), "--out", out, "--defense", def, "--synonyms", syn, "--ftml-beta", "1")
		code, _, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", def, code, stderr)
		}
		if !strings.Contains(stderr, "have synonyms in") || !strings.Contains(stderr, "alpha0") {
			t.Errorf("%s: stderr lacks coverage / alpha: %s", def, stderr)
		}
		m, err := model.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		rec, ok := m.Training[def].(map[string]any)
		if m.Training["defense"] != def || m.Training["objective"] != def || !ok || rec["beta"] != 1.0 || rec["alpha"].(float64) <= 0 {
			t.Fatalf("%s: training record %v", def, m.Training)
		}
		code, stdout, stderr := runCmd(t, "embed", "stats", "--model", out, "--synonyms", syn, "--json")
		if code != 0 {
			t.Fatalf("embed stats: exit %d: %s", code, stderr)
		}
		var st struct {
			AlphaSource string `json:"alpha_source"`
			Stats       struct {
				Anchors int     `json:"anchors"`
				Ratio   float64 `json:"ratio"`
			} `json:"stats"`
		}
		if err := json.Unmarshal([]byte(stdout), &st); err != nil {
			t.Fatalf("embed stats output %q: %v", stdout, err)
		}
		if st.Stats.Anchors == 0 || st.Stats.Ratio <= 0 || st.Stats.Ratio >= 1 || !strings.Contains(st.AlphaSource, def) {
			t.Fatalf("%s: embed stats %+v", def, st)
		}
	}
	if code, stdout, stderr := runCmd(t, "embed", "stats", "--model", filepath.Join(dir, "ftml"), "--synonyms", syn); code != 0 || !strings.Contains(stdout, "mean synonym distance") {
		t.Fatalf("embed stats text: %d %q %q", code, stdout, stderr)
	}

	// Wrong combinations and missing files are errors.
	for _, bad := range [][]string{
		{"--defense", "standard", "--ftml-beta", "2"},
		{"--defense", "standard", "--synonyms", syn},
		{"--defense", "ftml", "--synonyms", syn, "--cml-tau", "5"},
		{"--defense", "nope"},
		{"--defense", "ftml", "--synonyms", syn, "--ftml-norm", "3"},
	} {
		args := append(append([]string{}, base...), append([]string{"--out", filepath.Join(dir, "bad")}, bad...)...)
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	args := append(append([]string{}, base...), "--out", filepath.Join(dir, "bad"), "--defense", "ftml", "--synonyms", filepath.Join(dir, "missing.json"))
	if code, _, stderr := runCmd(t, args...); code != 1 || !strings.Contains(stderr, "missing.json") || !strings.Contains(stderr, "--synonyms") {
		t.Errorf("missing synonyms: exit %d: %s", code, stderr)
	}
}
