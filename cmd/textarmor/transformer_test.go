package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
)

// tinyHF writes a random 2-layer BERT over the generated task's words as a
// Hugging Face directory: the stand-in for a real checkpoint.
func tinyHF(t *testing.T, dir string) string {
	t.Helper()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", "."}
	lex := synth.DefaultLexicon()
	for _, g := range append(lex.Positive, lex.Negative...) {
		vocab = append(vocab, g...)
	}
	vocab = append(vocab, lex.Neutral...)
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 32, 64, "pooler", true
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: []string{"0", "1"}, Pieces: &opts}, wp, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "hf")
	if err := m.ExportHF(out, false); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTransformerFineTuneAttackEmbedExport: fine-tune a (tiny) Hugging
// Face checkpoint on generated data, attack it, embed texts with it, and
// export it back; predictions survive the export.
func TestTransformerFineTuneAttackEmbedExport(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	te := filepath.Join(dir, "test.csv")
	writeCSV(t, te, 40, 3)
	hf := tinyHF(t, dir)
	out := filepath.Join(dir, "model")
	code, stdout, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--test", te, "--model", "transformer", "--init", hf,
		"--epochs", "10", "--lr", "3e-3", "--batch", "16", "--out", out, "--quiet", "--json")
	if code != 0 {
		t.Fatalf("train --init exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if acc := rep["accuracy"].(float64); acc < 0.8 {
		t.Fatalf("test accuracy %.3f after fine-tuning on the generated task", acc)
	}
	if !strings.Contains(stderr, "adamw lr 0.003") || !strings.Contains(stderr, "linear schedule with warm-up 0.1") {
		t.Errorf("fine-tuning defaults not applied or not reported:\n%s", stderr)
	}
	code, stdout, stderr = runCmd(t, "attack", "--model", out, "--test", te, "--transformation", "synonyms", "--synonyms", syn,
		"--search", "greedy:order=gradient", "--json", "--quiet", "--workers", "2")
	if code != 0 {
		t.Fatalf("attack exit %d: %s", code, stderr)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum["successful"].(float64) == 0 || sum["accuracy_under_attack"].(float64) >= sum["original_accuracy"].(float64) {
		t.Errorf("the attack changed nothing: %s", stdout)
	}
	// The recipes run on a transformer too (neighbour-set substitutes; PWWS
	// needs WordNet and runs in CI's real-data tests).
	for _, recipe := range []string{"textfooler", "ga", "iga", "pso"} {
		code, stdout, stderr = runCmd(t, "attack", "--model", out, "--test", te, "--recipe", recipe, "--synonyms", syn,
			"--n", "8", "--json", "--quiet", "--workers", "2", "--wordnet", filepath.Join(dir, "no-wordnet"))
		if code != 0 || !strings.Contains(stdout, `"recipe":"`+recipe) {
			t.Errorf("attack --recipe %s: exit %d, %s: %s", recipe, code, stdout, stderr)
		}
	}
	code, stdout, stderr = runCmd(t, "embed-text", "--model", out, "--format", "tsv", "a good film", "a dull film")
	if code != 0 || strings.Count(stdout, "\n") != 2 || strings.Count(strings.Split(stdout, "\n")[0], "\t") != 16 {
		t.Errorf("embed-text exit %d, output %q: %s", code, stdout, stderr)
	}
	for _, method := range []string{"ig", "lime"} {
		code, stdout, stderr = runCmd(t, "explain", "--model", out, "--method", method, "--json", "a good and excellent film")
		var ex struct {
			Tokens []string  `json:"tokens"`
			Scores []float64 `json:"scores"`
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &ex) != nil || strings.Join(ex.Tokens, " ") != "a good and excellent film" || len(ex.Scores) != 5 {
			t.Errorf("explain --method %s: exit %d, %q: %s", method, code, stdout, stderr)
		}
	}
	exp := filepath.Join(dir, "exported")
	if code, _, stderr = runCmd(t, "export", "--model", out, "--format", "hf", "--out", exp); code != 0 {
		t.Fatalf("export exit %d: %s", code, stderr)
	}
	_, a, _ := runCmd(t, "predict", "--model", out, "--json", "a good and excellent film", "a dull plot")
	_, b, _ := runCmd(t, "predict", "--model", exp, "--json", "a good and excellent film", "a dull plot")
	if a == "" || a != b {
		t.Errorf("predictions differ after export:\n%s\n%s", a, b)
	}
	// Adversarial training in attack rounds (the adv baseline) on the
	// transformer.
	advOut := filepath.Join(dir, "adv")
	code, stdout, stderr = runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf, "--defense", "adv",
		"--epochs", "2", "--lr", "3e-3", "--batch", "16", "--rounds", "1", "--round-epochs", "1", "--round-examples", "40",
		"--synonyms", syn, "--wordnet", filepath.Join(dir, "no-wordnet"), "--round-workers", "2", "--out", advOut, "--quiet")
	if code != 0 {
		t.Fatalf("train --init --defense adv: exit %d: %s", code, stderr)
	}
	if am, err := model.Load(advOut); err != nil || am.Training["defense"] != "adv" || am.Pieces == nil {
		t.Errorf("adv model: %v, training record %v", err, am.Training)
	}
	// The embedding-space defenses fine-tune the transformer through its
	// word-piece embeddings (neighbours among the pieces; ε small, as the
	// pieces' rows are: N(0, 0.02²) here), and explain --perturbation
	// reads the result.
	for def, eps := range map[string]string{"advt": "0.005", "iadvt": "0.02", "spgd": "0.02"} {
		o := filepath.Join(dir, def)
		code, _, stderr = runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf, "--defense", def,
			"--"+def+"-eps", eps, "--epochs", "10", "--lr", "3e-3", "--batch", "16", "--out", o, "--quiet")
		if code != 0 {
			t.Fatalf("train --init --defense %s: exit %d: %s", def, code, stderr)
		}
		if am, err := model.Load(o); err != nil || am.Training["defense"] != def || accuracyOf(t, o, dv) < 0.75 {
			t.Errorf("%s model: %v, training record %v", def, err, am.Training)
		}
	}
	// CARL: FreeLB's SST-2 row (files take it) with a small α, L_D from
	// epoch 6 with the banks filled in epoch 5, once the random tiny
	// encoder has learnt the task (L_D from epoch 4 collapses its sentence
	// vectors: docs/carl-rar.md); the log has the contrastive term.
	carl := filepath.Join(dir, "carl")
	code, _, stderr = runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf, "--defense", "carl",
		"--freelb-alpha", "0.0001", "--carl-start-epoch", "5", "--epochs", "8", "--lr", "3e-3", "--batch", "16", "--out", carl)
	if code != 0 || !strings.Contains(stderr, "freelb: n 2, α 0.0001, γ 0.6, ε 0 (Table 1's sst2 row") {
		t.Fatalf("train --defense carl: exit %d: %s", code, stderr)
	}
	if log, err := os.ReadFile(carl + ".log.jsonl"); err != nil || !strings.Contains(string(log), `"carl":`) || accuracyOf(t, carl, dv) < 0.75 {
		t.Errorf("carl model: %v, log %s", err, log)
	}
	// RAR: the model gains a head tied to its word pieces; reconstruct
	// decodes the test texts under k-PGD and has the plain model judge them.
	rar := filepath.Join(dir, "rar")
	code, _, stderr = runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf, "--defense", "rar",
		"--freelb-alpha", "0.0001", "--epochs", "12", "--lr", "3e-3", "--batch", "16", "--out", rar, "--quiet")
	if code != 0 || accuracyOf(t, rar, dv) < 0.65 { // the random tiny encoder learns the task late beside L_R
		t.Fatalf("train --defense rar: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCmd(t, "reconstruct", "--model", rar, "--plain", filepath.Join(dir, "advt"), "--test", dv, "--eps", "0.5", "--json")
	var rec pipeline.ReconstructReport
	if code != 0 || json.Unmarshal([]byte(stdout), &rec) != nil || rec.N != 60 || len(rec.Texts) != 60 || rec.TokenAccuracyClean < 0.5 ||
		rec.TokenAccuracyAttacked > rec.TokenAccuracyClean || rec.Texts[0].PlainOriginal < 0 || rec.Texts[0].Original == "" {
		t.Errorf("reconstruct: exit %d: %.300s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd(t, "reconstruct", "--model", filepath.Join(dir, "advt"), "a film"); code != 2 || !strings.Contains(stderr, "no reconstruction head") {
		t.Errorf("reconstruct without a head: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCmd(t, "explain", "--model", filepath.Join(dir, "spgd"), "--perturbation", "spgd", "--json", "a good and excellent film with a dull plot")
	if code != 0 || !strings.Contains(stdout, `"toward"`) {
		t.Errorf("explain --perturbation on the transformer: exit %d: %s %s", code, stdout, stderr)
	}
	// Misuse: flags that shape a network, defenses not available yet.
	for _, args := range [][]string{
		{"--init", hf, "--model", "transformer", "--embed-dim", "8"},
		{"--init", hf, "--model", "cnn"},
		{"--init", hf, "--model", "transformer", "--defense", "ibp"},
		{"--init", hf, "--model", "transformer", "--defense", "ftml", "--vocab-supplement", "0"},
		{"--init", hf, "--model", "transformer", "--vocab-supplement", "-2"},
		{"--model", "cnn", "--vocab-supplement", "10"},
		{"--model", "cnn", "--freeze-encoder"},
	} {
		args = append([]string{"train", "--train", tr, "--out", filepath.Join(dir, "x")}, args...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// accuracyOf is a model's accuracy on a labelled file, by eval --json.
func accuracyOf(t *testing.T, modelDir, file string) float64 {
	t.Helper()
	code, stdout, stderr := runCmd(t, "eval", "--model", modelDir, "--test", file, "--json")
	var rep struct {
		Accuracy float64 `json:"accuracy"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
		t.Fatalf("eval %s: exit %d: %s", modelDir, code, stderr)
	}
	return rep.Accuracy
}
