package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
)

// pairTask makes n generated sentence pairs over tinyHF's words. The
// premise starts with the first word of one of the positive synonym
// groups; the hypothesis starts with the same word (entailment), the first
// word of another positive group (neutral) or a negative word
// (contradiction), so telling entailment from neutral needs both texts.
func pairTask(n int, seed int64) (s1, s2, labels []string) {
	lex := synth.DefaultLexicon()
	rng := rand.New(rand.NewSource(seed))
	pick := func(g []string) string { return g[rng.Intn(len(g))] }
	filler := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = pick(lex.Neutral)
		}
		return strings.Join(w, " ")
	}
	for i := 0; i < n; i++ {
		g := rng.Intn(len(lex.Positive))
		h := lex.Positive[g][0]
		label := []string{"entailment", "neutral", "contradiction"}[i%3]
		switch label {
		case "neutral":
			h = lex.Positive[(g+1+rng.Intn(len(lex.Positive)-1))%len(lex.Positive)][0]
		case "contradiction":
			h = pick(lex.Negative[rng.Intn(len(lex.Negative))])
		}
		s1 = append(s1, lex.Positive[g][0]+" "+filler(3)+" .")
		s2 = append(s2, h+" "+filler(2)+" .")
		labels = append(labels, label)
	}
	return s1, s2, labels
}

// pairDataDir writes a data folder with snli/ and mrpc/ in their real
// formats, holding the generated task (MRPC: entailment = equivalent).
func pairDataDir(t *testing.T, dir string) string {
	t.Helper()
	data := filepath.Join(dir, "data")
	w := func(rel string, lines []string) {
		p := filepath.Join(data, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sp := range []struct {
		split string
		n     int
		seed  int64
	}{{"dev", 600, 1}, {"test", 60, 2}} {
		s1, s2, labels := pairTask(sp.n, sp.seed)
		w("snli/s1."+sp.split, s1)
		w("snli/s2."+sp.split, s2)
		w("snli/labels."+sp.split, labels)
		rows := []string{"\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"}
		for i := range s1 {
			q := 0
			if labels[i] == "entailment" {
				q = 1
			}
			rows = append(rows, fmt.Sprintf("%d\t%d\t%d\t%s\t%s", q, 2*i, 2*i+1, s1[i], s2[i]))
		}
		name := map[string]string{"dev": "train", "test": "test"}[sp.split]
		w("mrpc/msr_paraphrase_"+name+".txt", rows)
	}
	return data
}

// TestPairPresetsCLI: fine-tune a tiny checkpoint on generated SNLI- and
// MRPC-format data (--dataset snli|mrpc), evaluate it, attack its
// hypotheses, predict pairs; what does not read pairs is refused.
func TestPairPresetsCLI(t *testing.T) {
	dir := t.TempDir()
	data := pairDataDir(t, dir)
	hf := tinyHF(t, dir)
	syn := filepath.Join(dir, "syn.json")
	writeSynonyms(t, syn)
	out := filepath.Join(dir, "snli-model")
	code, stdout, stderr := runCmd(t, "train", "--dataset", "snli", "--data", data, "--model", "transformer", "--init", hf,
		"--epochs", "8", "--lr", "3e-3", "--batch", "16", "--out", out, "--quiet", "--json")
	if code != 0 {
		t.Fatalf("train --dataset snli: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"sentence pairs: read as [CLS] first [SEP] second [SEP]", "DEVIATION: the data has no SNLI train split", "540 train / 60 dev / 60 test"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("train log lacks %q:\n%s", want, stderr)
		}
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	acc := rep["accuracy"].(float64)
	t.Logf("snli (generated) test accuracy %.3f", acc)
	// Chance is 1/3; the hypothesis alone gives contradiction (2/3), and
	// a model this small needs many more epochs to tell entailment from
	// neutral (the train package's test learns a two-sided task).
	if acc < 0.6 {
		t.Fatalf("test accuracy %.3f on the generated pair task", acc)
	}
	m, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Pairs() || m.Training["sentence_pairs"] != true {
		t.Fatalf("saved model: pairs %v, record %v", m.Pairs(), m.Training)
	}

	code, stdout, stderr = runCmd(t, "eval", "--model", out, "--dataset", "snli", "--data", data, "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(stdout), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["accuracy"].(float64) != acc {
		t.Errorf("eval accuracy %v, train's test accuracy %v", ev["accuracy"], acc)
	}

	csvPath := filepath.Join(dir, "attack.csv")
	code, stdout, stderr = runCmd(t, "attack", "--model", out, "--dataset", "snli", "--data", data, "--recipe", "textbugger", "--synonyms", syn,
		"--n", "20", "--workers", "2", "--json", "--quiet", "--out", csvPath)
	if code != 0 {
		t.Fatalf("attack: exit %d: %s", code, stderr)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	t.Logf("attack: %v successful, %v failed, %v skipped", sum["successful"], sum["failed"], sum["skipped"])
	if sum["successful"].(float64) == 0 || sum["mismatched"].(float64) != 0 || sum["verified"] != sum["successful"] {
		t.Errorf("successful %v, verified %v, mismatched %v", sum["successful"], sum["verified"], sum["mismatched"])
	}
	ds, err := dataset.Load("snli", data)
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := attack.ReadCSV(csvPath)
	if err != nil || len(rs) != 20 {
		t.Fatalf("results: %d rows, %v", len(rs), err)
	}
	for _, r := range rs {
		e := ds.Test[r.Index]
		if r.OriginalText != e.Text2 {
			t.Errorf("row %d: original_text %q, the hypothesis is %q", r.Index, r.OriginalText, e.Text2)
		}
		if r.Type == attack.Successful && r.PerturbedText == r.OriginalText {
			t.Errorf("row %d: success without a change", r.Index)
		}
	}

	// The word-level recipes, and the gradient order, on pairs.
	vec := filepath.Join(dir, "vec.txt")
	writeVectors(t, vec)
	head, texts := filepath.Join(dir, "mlm"), filepath.Join(dir, "texts.csv")
	writeCSV(t, texts, 100, 1)
	if code, _, stderr := runCmd(t, "mlm", "train-head", "--init", hf, "--train", texts, "--test", texts, "--out", head, "--epochs", "1"); code != 0 {
		t.Fatalf("train-head exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"--recipe", "pwws", "--protocol", "ftml", "--synonyms", syn},
		{"--recipe", "textfooler", "--vectors", vec},
		{"--recipe", "bae", "--mlm", head, "--sentence-encoder", hf},
		{"--recipe", "bert-attack", "--mlm", head, "--sentence-encoder", hf},
		{"--transformation", "synonyms", "--synonyms", syn, "--search", "greedy:order=gradient"},
	} {
		path := filepath.Join(dir, args[1]+".csv")
		code, stdout, stderr := runCmd(t, append([]string{"attack", "--model", out, "--dataset", "snli", "--data", data, "--n", "10",
			"--json", "--quiet", "--out", path}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var sum map[string]any
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatal(err)
		}
		rs, _, err := attack.ReadCSV(path)
		if err != nil || len(rs) != 10 || sum["mismatched"].(float64) != 0 {
			t.Fatalf("%v: %d rows, %v; %v", args, len(rs), err, sum)
		}
		for _, r := range rs {
			if r.OriginalText != ds.Test[r.Index].Text2 {
				t.Errorf("%v: row %d attacked %q, not the hypothesis", args, r.Index, r.OriginalText)
			}
		}
		t.Logf("%v: %v successful, %v failed, %v skipped", args, sum["successful"], sum["failed"], sum["skipped"])
	}

	e := ds.Test[0]
	code, stdout, stderr = runCmd(t, "predict", "--model", out, e.Text+"\t"+e.Text2)
	// label, probability, the pair as printed (its TAB escaped)
	if f := strings.Split(stdout, "\t"); code != 0 || len(f) != 3 || !slices.Contains(ds.Classes, f[0]) || f[2] != e.Text+`\x09`+e.Text2+"\n" {
		t.Errorf("predict: exit %d, %q %s", code, stdout, stderr)
	}
	if code, _, stderr = runCmd(t, "predict", "--model", out, e.Text); code == 0 || !strings.Contains(stderr, "first<TAB>second") {
		t.Errorf("predict without a TAB: exit %d, %s", code, stderr)
	}

	// MRPC goes through the same path, with two classes.
	mout := filepath.Join(dir, "mrpc-model")
	code, stdout, stderr = runCmd(t, "train", "--dataset", "mrpc", "--data", data, "--model", "transformer", "--init", hf,
		"--epochs", "1", "--lr", "3e-3", "--batch", "16", "--out", mout, "--quiet", "--json")
	if code != 0 {
		t.Fatalf("train --dataset mrpc: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "540 train / 60 dev / 60 test, 2 classes") {
		t.Errorf("mrpc train log:\n%s", stderr)
	}

	// Refused: a CNN on pairs, a defense on pairs, a pair model on single texts.
	if code, _, stderr = runCmd(t, "train", "--dataset", "snli", "--data", data, "--model", "cnn", "--epochs", "1", "--out", filepath.Join(dir, "cnn"), "--quiet"); code == 0 || !strings.Contains(stderr, "sentence pairs") {
		t.Errorf("cnn on snli: exit %d, %s", code, stderr)
	}
	if code, _, stderr = runCmd(t, "train", "--dataset", "snli", "--data", data, "--model", "transformer", "--init", hf, "--defense", "freelb", "--epochs", "1",
		"--out", filepath.Join(dir, "freelb"), "--quiet"); code == 0 || !strings.Contains(stderr, "sentence pairs") {
		t.Errorf("freelb on snli: exit %d, %s", code, stderr)
	}
	single := filepath.Join(dir, "single.csv")
	writeCSV(t, single, 10, 5)
	if code, _, stderr = runCmd(t, "eval", "--model", out, "--test", single); code == 0 || !strings.Contains(stderr, "reads sentence pairs") {
		t.Errorf("pair model on single texts: exit %d, %s", code, stderr)
	}
}
