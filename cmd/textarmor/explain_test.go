package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestExplainAndImportance(t *testing.T) {
	dir := t.TempDir()
	tr, dv := filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv")
	writeCSV(t, tr, 300, 1)
	writeCSV(t, dv, 60, 2)
	out := filepath.Join(dir, "model")
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "cnn", "--embed-dim", "16",
		"--filters", "8", "--epochs", "2", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	for _, method := range []string{"ig", "lime"} {
		code, stdout, stderr := runCmd(t, "explain", "--model", out, "--method", method, "--samples", "300", "--json", "a truly great film", "zzqx qqzz")
		if code != 0 {
			t.Fatalf("explain %s exit %d: %s", method, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 2 {
			t.Fatalf("explain %s: %d lines: %s", method, len(lines), stdout)
		}
		var r struct {
			Tokens []string  `json:"tokens"`
			Scores []float64 `json:"scores"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || len(r.Tokens) == 0 || len(r.Tokens) != len(r.Scores) {
			t.Errorf("explain %s: %q (%v)", method, lines[0], err)
		}
		if !strings.Contains(lines[1], "unknown") {
			t.Errorf("all-unknown text: %q", lines[1])
		}
	}
	code, stdout, _ := runCmd(t, "explain", "--model", out, "--color", "always", "a great film")
	if code != 0 || !strings.Contains(stdout, "\x1b[48;5;") {
		t.Errorf("coloured output: code %d %q", code, stdout)
	}
	if code, _, stderr := runCmd(t, "explain", "--model", out, "--class", "7", "good"); code != 2 || !strings.Contains(stderr, "--class") {
		t.Errorf("bad class: code %d %q", code, stderr)
	}
	if code, _, _ := runCmd(t, "explain", "--model", out, "--method", "shap", "good"); code != 2 {
		t.Errorf("bad method: code %d", code)
	}
	// importance needs a masked model.
	if code, _, stderr := runCmd(t, "importance", "--model", out); code != 1 || !strings.Contains(stderr, "no word mask") {
		t.Errorf("importance on an unmasked model: code %d %q", code, stderr)
	}
}
