package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/model"
)

func TestTrainBaselines(t *testing.T) {
	dir := t.TempDir()
	tr, te, syn := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv"), filepath.Join(dir, "nb.json")
	writeCSV(t, tr, 300, 1)
	writeCSV(t, te, 100, 3)
	writeSynonyms(t, syn)
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"sem", nil},
		{"atfl", []string{"--atfl-steps", "5"}},
		{"ascc", []string{"--ascc-steps", "2"}},
		{"ibp", []string{"--ibp-ramp-epochs", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			args := append([]string{"train", "--train", tr, "--test", te, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
				"--epochs", "2", "--batch", "32", "--lr", "0.005", "--out", out, "--quiet", "--synonyms", syn, "--defense", c.name}, c.extra...)
			code, _, stderr := runCmd(t, args...)
			if code != 0 {
				t.Fatalf("train exit %d: %s", code, stderr)
			}
			if c.name == "sem" && !strings.Contains(stderr, "synonym pairs share a code") {
				t.Errorf("sem does not report its shared-code pairs:\n%s", stderr)
			}
			m, err := model.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if m.Training["objective"] != c.name {
				t.Errorf("training record objective %v", m.Training["objective"])
			}
			if sem, _ := m.Training["sem"].(map[string]any); c.name == "sem" && (sem["synonym_pairs"] == nil || sem["synonym_pairs_shared_code"] == nil || sem["k"] != float64(4)) {
				t.Errorf("sem training record %v lacks the shared-code pairs or the default k = 4", m.Training["sem"])
			}
			if (m.Net.Cfg.IDMap != nil) != (c.name == "sem") {
				t.Errorf("id map present: %v", m.Net.Cfg.IDMap != nil)
			}
			code, stdout, stderr := runCmd(t, "eval", "--model", out, "--test", te, "--certify", "--synonyms", syn, "--json")
			if code != 0 {
				t.Fatalf("eval --certify exit %d: %s", code, stderr)
			}
			var rep map[string]any
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if ca, ok := rep["certified_accuracy"].(float64); !ok || ca > rep["accuracy"].(float64)+1e-9 {
				t.Errorf("certified accuracy %v, accuracy %v", rep["certified_accuracy"], rep["accuracy"])
			}
		})
	}
	// --ibp-hull projected is recorded, and eval certifies with it.
	out := filepath.Join(dir, "ibp-projected")
	code, _, stderr := runCmd(t, "train", "--train", tr, "--test", te, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "2", "--batch", "32", "--lr", "0.005", "--out", out, "--quiet", "--synonyms", syn, "--defense", "ibp", "--ibp-hull", "projected")
	if code != 0 {
		t.Fatalf("train --ibp-hull projected: exit %d: %s", code, stderr)
	}
	if m, err := model.Load(out); err != nil {
		t.Fatal(err)
	} else if rec, _ := m.Training["ibp"].(map[string]any); rec["hull"] != "projected" {
		t.Errorf("ibp training record %v: want hull projected", m.Training["ibp"])
	}
	code, stdout, stderr := runCmd(t, "eval", "--model", out, "--test", te, "--certify", "--synonyms", syn, "--json")
	if code != 0 || !strings.Contains(stdout, `"certify_hull":"projected"`) {
		t.Errorf("eval --certify: exit %d, %s %s", code, stdout, stderr)
	}
	// Jia et al.'s layers: recorded in the model, named by eval, certified.
	layered := filepath.Join(dir, "ibp-layers")
	code, _, stderr = runCmd(t, "train", "--train", tr, "--test", te, "--model", "bilstm", "--embed-dim", "16", "--hidden", "8", "--pool", "mean",
		"--input-layer", "12", "--head-hidden", "6", "--epochs", "1", "--batch", "32", "--out", layered, "--quiet", "--synonyms", syn,
		"--defense", "ibp", "--ibp-hull", "projected")
	if code != 0 {
		t.Fatalf("train --input-layer --head-hidden: exit %d: %s", code, stderr)
	}
	if m, err := model.Load(layered); err != nil {
		t.Fatal(err)
	} else if c := m.Net.Cfg; c.InputLayer != 12 || c.HeadHidden != 6 || m.Net.In == nil || m.Net.Hid == nil {
		t.Errorf("saved model: input layer %d, head hidden %d", c.InputLayer, c.HeadHidden)
	}
	code, stdout, stderr = runCmd(t, "eval", "--model", layered, "--test", te, "--certify", "--synonyms", syn)
	if code != 0 || !strings.Contains(stdout, "bilstm, input layer 12, hidden layer 6") || !strings.Contains(stdout, "certified") {
		t.Errorf("eval of the layered model: exit %d, %s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--out", filepath.Join(dir, "z"), "--input-layer", "-1"); code != 2 || !strings.Contains(stderr, "--input-layer -1") {
		t.Errorf("--input-layer -1: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--out", filepath.Join(dir, "y"), "--synonyms", syn, "--defense", "ibp", "--ibp-hull", "box"); code == 0 || !strings.Contains(stderr, "unknown ibp hull") {
		t.Errorf("--ibp-hull box: exit %d, %q", code, stderr)
	}
	// A baseline flag with the wrong defense is an error.
	for _, bad := range [][]string{{"--defense", "sem", "--atfl-steps", "3"}, {"--defense", "ibp", "--ascc-lr", "1"}, {"--defense", "atfl", "--ftml-beta", "1"}, {"--defense", "ascc", "--ibp-hull", "projected"}} {
		args := append([]string{"train", "--train", tr, "--out", filepath.Join(dir, "x"), "--synonyms", syn}, bad...)
		if code, _, stderr := runCmd(t, args...); code == 0 || !strings.Contains(stderr, "needs --defense") {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}
