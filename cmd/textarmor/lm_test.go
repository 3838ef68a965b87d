package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
)

func TestLMTrainAndAlzantotFilter(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	corpus := filepath.Join(dir, "corpus.txt")
	var lines []string
	for _, ex := range synth.SentimentDataset(200, 0, 0, 7).Train {
		lines = append(lines, ex.Text)
	}
	if err := os.WriteFile(corpus, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lm := filepath.Join(dir, "lm.bin")
	code, stdout, stderr := runCmd(t, "lm", "train", "--corpus", corpus, "--out", lm, "--label", "synth", "--json")
	if code != 0 {
		t.Fatalf("lm train exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || !strings.HasPrefix(rep["name"].(string), "kn3(synth") {
		t.Fatalf("lm train --json %q: %v", stdout, err)
	}

	code, stdout, stderr = runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "alzantot", "--synonyms", syn,
		"--lm", lm, "--n", "10", "--workers", "2", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("attack --lm exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "language model: kn3(synth") || !strings.Contains(stdout, "language-model-top4") {
		t.Errorf("the attack does not name its language model: %s", stdout)
	}

	// --lm belongs to ga without the FTML protocol; a bad file names itself.
	for _, bad := range [][]string{{"--recipe", "pwws", "--protocol", "ftml"}, {"--recipe", "ga", "--protocol", "ftml"}} {
		args := append([]string{"attack", "--model", mdir, "--test", te, "--synonyms", syn, "--lm", lm, "--quiet"}, bad...)
		if code, _, stderr := runCmd(t, args...); code != 2 || !strings.Contains(stderr, "--lm") {
			t.Errorf("%v: exit %d %s", bad, code, stderr)
		}
	}
	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "ga", "--synonyms", syn, "--lm", corpus, "--quiet"); code != 1 || !strings.Contains(stderr, corpus) {
		t.Errorf("a corpus given as --lm: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "lm", "train", "--corpus", corpus); code != 2 || !strings.Contains(stderr, "--out") {
		t.Errorf("lm train without --out: exit %d %s", code, stderr)
	}
}
