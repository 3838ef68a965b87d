package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
)

// embed-train runs RobustEmbed on a tiny checkpoint from a corpus file,
// selecting on a generated STS-B dev file; eval-sts reads the result.
func TestEmbedTrainCLI(t *testing.T) {
	dir := t.TempDir()
	hf := tinyHF(t, dir)
	var corpus, dev strings.Builder
	ex := synth.Sentiment(80, 0, 4)
	for _, e := range ex {
		corpus.WriteString(e.Text + "\n")
	}
	for i := 0; i+1 < 40; i += 2 {
		score := 1.0
		if ex[i].Label == ex[i+1].Label {
			score = 4
		}
		fmt.Fprintf(&dev, "g\tf\t2012\t%04d\t%.1f\t%s\t%s\n", i, score, ex[i].Text, ex[i+1].Text)
	}
	os.MkdirAll(filepath.Join(dir, "stsb"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "stsb", "sts-dev.csv"), []byte(dev.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte(corpus.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "enc")
	code, stdout, stderr := runCmd(t, "embed-train", "--init", hf, "--data", dir, "--corpus", filepath.Join(dir, "corpus.txt"),
		"--epochs", "1", "--batch", "16", "--lr", "1e-3", "--eval-every", "2", "--robust-k", "2", "--robust-t", "2", "--out", out)
	if code != 0 || !strings.Contains(stdout, "best STS-B dev Spearman") || !strings.Contains(stderr, "robustembed from") {
		t.Fatalf("embed-train: exit %d: %s %s", code, stdout, stderr)
	}
	if m, err := model.Load(out); err != nil || m.Training["method"] != "robustembed" {
		t.Fatalf("trained encoder: %v", err)
	}
	// The trained encoder starts a classification task (RobustEmbed's
	// Table 3): train --init takes a textarmor model too.
	_, tr, dv, _ := sentimentFiles(t)
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", out,
		"--epochs", "1", "--lr", "3e-3", "--batch", "16", "--out", filepath.Join(dir, "clf"), "--quiet"); code != 0 {
		t.Fatalf("train --init ENCODER: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"--method", "bert"}, {"--robust-norm", "3"}, {"--batch", "1"}, {"--robust-lambda", "-1"}} {
		args = append([]string{"embed-train", "--init", hf, "--data", dir, "--corpus", filepath.Join(dir, "corpus.txt"), "--out", filepath.Join(dir, "x")}, args...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

func TestBenchRobustEmbedTableFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"--rows", "bert"}, {"--adv-n", "1"}, {"--adv-sets", "sts12"}, {"--workers", "0"}, {"--tasks", "yelp"}, {"--reps", "0"}, {"--transfer-tasks", "sick"}} {
		args = append([]string{"bench", "robustembed-table", "--data", dir, "--out", filepath.Join(dir, "t")}, args...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}
