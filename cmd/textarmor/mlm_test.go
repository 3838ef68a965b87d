package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/pipeline"
)

// mlm train-head on a tiny checkpoint writes a BertForMaskedLM directory
// whose head mlm eval scores exactly as training left it (the export
// round trip); a checkpoint without a head and bad settings are refused.
func TestMLMTrainHeadAndEval(t *testing.T) {
	dir, tr, _, _ := sentimentFiles(t)
	te := filepath.Join(dir, "test.csv")
	writeCSV(t, te, 40, 3)
	hf := tinyHF(t, dir)
	out := filepath.Join(dir, "mlm")
	code, _, stderr := runCmd(t, "mlm", "eval", "--model", hf, "--test", te)
	if code != 2 || !strings.Contains(stderr, "has no masked-LM head") {
		t.Errorf("eval of a checkpoint without a head: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := runCmd(t, "mlm", "train-head", "--init", hf, "--train", tr, "--test", te, "--out", out,
		"--epochs", "3", "--lr", "3e-3", "--unfreeze", "1", "--json")
	if code != 0 {
		t.Fatalf("train-head exit %d: %s", code, stderr)
	}
	var trained pipeline.MLMHeadReport
	if err := json.Unmarshal([]byte(stdout), &trained); err != nil {
		t.Fatal(err)
	}
	a := trained.HeldOut["test.csv"]
	if trained.FromCheckpoint || len(trained.Epochs) != 3 || trained.Texts != 200 || a.N == 0 || a.Top10 < a.Top1 ||
		trained.Epochs[2].Loss >= trained.Epochs[0].Loss || !strings.Contains(stderr, "mlm: epoch 3") {
		t.Errorf("report %+v\n%s", trained, stderr)
	}
	if _, err := os.Stat(out + ".ckpt"); !os.IsNotExist(err) {
		t.Errorf("the training checkpoint outlived the export: %v", err)
	}
	cfg, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil || !strings.Contains(string(cfg), `"BertForMaskedLM"`) {
		t.Errorf("config.json: %v\n%s", err, cfg)
	}
	code, stdout, stderr = runCmd(t, "mlm", "eval", "--model", out, "--test", te, "--json")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, stderr)
	}
	var again pipeline.MLMHeadReport
	if err := json.Unmarshal([]byte(stdout), &again); err != nil {
		t.Fatal(err)
	}
	if !again.FromCheckpoint || again.HeldOut["test.csv"] != a {
		t.Errorf("the exported head scores %+v, trained %+v", again.HeldOut, a)
	}
	for _, bad := range [][]string{
		{"mlm", "train-head", "--init", hf, "--train", tr, "--test", te, "--out", out + "2", "--unfreeze", "9"},
		{"mlm", "train-head", "--init", hf, "--train", tr, "--test", te, "--out", out + "2", "--mask-rate", "0"},
		{"mlm", "train-head", "--init", hf, "--train", tr, "--test", te},
		{"mlm", "train-head", "--init", hf, "--train", tr, "--test", te, "--out", out + "2", "--checkpoint-every", "-1s"},
		{"mlm", "eval", "--model", out, "--test", te, "--epochs", "2"},
		{"mlm"},
	} {
		if code, _, stderr := runCmd(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, %s", bad, code, stderr)
		}
	}
}

// attack --recipe bae and bert-attack with a head from mlm train-head and
// a transformer sentence encoder; the LM is required and must have a head.
func TestContextualAttacksCLI(t *testing.T) {
	dir := t.TempDir()
	te, _, mdir := attackFixture(t, dir)
	hf := tinyHF(t, dir)
	head := filepath.Join(dir, "mlm")
	if code, _, stderr := runCmd(t, "mlm", "train-head", "--init", hf, "--train", filepath.Join(dir, "train.csv"), "--test", te,
		"--out", head, "--epochs", "1"); code != 0 {
		t.Fatalf("train-head exit %d: %s", code, stderr)
	}
	for _, recipe := range []string{"bae", "bert-attack"} {
		code, stdout, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", recipe, "--mlm", head,
			"--sentence-encoder", hf, "--n", "10", "--json", "--quiet")
		if code != 0 {
			t.Fatalf("%s exit %d: %s", recipe, code, stderr)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		d, _ := json.Marshal(rep["deviations"])
		if rep["n"].(float64) != 10 || !strings.Contains(string(d), "sentence-embedding-cosine(hf)") || !strings.Contains(string(d), "masked LM") {
			t.Errorf("%s: %v", recipe, rep)
		}
	}
	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "bae", "--quiet"); code != 2 || !strings.Contains(stderr, "--mlm") {
		t.Errorf("bae without --mlm: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "bert-attack", "--mlm", hf, "--quiet"); code != 2 || !strings.Contains(stderr, "no masked-LM head") {
		t.Errorf("bert-attack with a headless --mlm: exit %d, %s", code, stderr)
	}
}

// attack --recipe hla on a transformer without --vectors takes the
// sentence encoder as its USE stand-in, and says so; with neither it is a
// usage error naming both.
func TestHLATransformerSentenceEncoder(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	te := filepath.Join(dir, "test.csv")
	writeCSV(t, te, 20, 3)
	hf := tinyHF(t, dir)
	out := filepath.Join(dir, "model")
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf,
		"--epochs", "2", "--lr", "3e-3", "--batch", "16", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(t, "attack", "--model", out, "--test", te, "--recipe", "hla", "--synonyms", syn,
		"--sentence-encoder", hf, "--n", "4", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("hla exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if d, _ := json.Marshal(rep["deviations"]); rep["n"].(float64) != 4 || !strings.Contains(string(d), "sentence-embedding-cosine(hf)") {
		t.Errorf("hla with a sentence encoder: %v", rep)
	}
	if code, _, stderr := runCmd(t, "attack", "--model", out, "--test", te, "--recipe", "hla", "--synonyms", syn, "--n", "4", "--quiet"); code != 2 ||
		!strings.Contains(stderr, "--vectors") || !strings.Contains(stderr, "--sentence-encoder") {
		t.Errorf("hla with no encoder: exit %d, %s", code, stderr)
	}
}
