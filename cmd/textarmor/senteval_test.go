package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
)

// sentevalData writes a miniature data folder in the shared/data formats:
// MR (1,600 sentences), MRPC, TREC and SST-2 (160 each) for eval-transfer, STS-B, SICK and STS13 for
// eval-sts; the texts come from the generated sentiment task.
func sentevalData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ex := synth.Sentiment(160, 0, 21)
	var mr, glue, stsa, mrpcTrain, mrpcTest, trecTrain, trecTest, stsb, sick, fnwn, fnwnGS strings.Builder
	trec := []string{"DESC:def", "ENTY:animal", "ABBR:exp", "HUM:ind", "LOC:city", "NUM:date"}
	sick.WriteString("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n")
	hdr := "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
	mrpcTrain.WriteString(hdr)
	mrpcTest.WriteString(hdr)
	glue.WriteString("sentence\tlabel\n")
	for i, e := range ex {
		fmt.Fprintf(&mr, "%d\t%s\n", e.Label, e.Text)
		fmt.Fprintf(&glue, "%s \t%d\n", e.Text, e.Label)
		fmt.Fprintf(&stsa, "%d %s\n", e.Label, e.Text)
		other := ex[(i+1)%len(ex)]
		para := 0
		if e.Label == other.Label {
			para = 1
		}
		row := fmt.Sprintf("%d\t%d\t%d\t%s\t%s\n", para, 2*i, 2*i+1, e.Text, other.Text)
		if i < 120 {
			mrpcTrain.WriteString(row)
		} else {
			mrpcTest.WriteString(row)
		}
		q := fmt.Sprintf("%s what is %s ?\n", trec[i%6], e.Text)
		if i < 120 {
			trecTrain.WriteString(q)
		} else {
			trecTest.WriteString(q)
		}
		score := 1.0 + 3*float64(para) + float64(i%3)*0.3
		fmt.Fprintf(&stsb, "main-captions\tMSRvid\t2012test\t%04d\t%.3f\t%s\t%s\n", i, score, e.Text, other.Text)
		fmt.Fprintf(&sick, "%d\t%s\t%s\t%.1f\tNEUTRAL\n", i, e.Text, other.Text, score)
		fmt.Fprintf(&fnwn, "%s\t%s\n", e.Text, other.Text)
		fmt.Fprintf(&fnwnGS, "%.2f\n", score)
	}
	// MR is larger: the classifiers take 64-example steps at Adam's 1e-3
	// and stop after 6 looks without progress, too few steps on 160.
	for _, e := range synth.Sentiment(1440, 0, 22) {
		fmt.Fprintf(&mr, "%d\t%s\n", e.Label, e.Text)
	}
	w("mr/rt-polarity.utf8.tsv", mr.String())
	w("sst2-glue/train.tsv", glue.String())
	w("sst2-glue/dev.tsv", glue.String())
	w("sst2-stsa/stsa.binary.test", stsa.String())
	w("mrpc/msr_paraphrase_train.txt", mrpcTrain.String())
	w("mrpc/msr_paraphrase_test.txt", mrpcTest.String())
	w("trec/TREC.train", trecTrain.String())
	w("trec/TREC.test", trecTest.String())
	for _, split := range []string{"train", "dev", "test"} {
		w("stsb/sts-"+split+".csv", stsb.String())
	}
	w("sick/SICK_test_annotated.txt", strings.ReplaceAll(sick.String(), "\n", "\r\n"))
	for _, sub := range []string{"FNWN", "OnWN", "headlines"} {
		w("sts12-16/STS13/STS.input."+sub+".txt", fnwn.String())
		w("sts12-16/STS13/STS.gs."+sub+".txt", fnwnGS.String())
	}
	return dir
}

// TestEvalTransferAndSTS runs eval-transfer and eval-sts on a tiny random
// transformer and on a CNN (the mean of its word vectors), on generated
// data in the shared formats.
func TestEvalTransferAndSTS(t *testing.T) {
	data := sentevalData(t)
	hf := tinyHF(t, t.TempDir())
	args := []string{"eval-transfer", "--model", hf, "--data", data, "--tasks", "mr,mrpc,trec,sst2", "--json"}
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("eval-transfer exit %d: %s", code, stderr)
	}
	var rep struct {
		Results []struct {
			Task     string
			Accuracy float64
			Folds    int
			L2       []float64
			Train    int
		}
		Avg   float64
		AvgOf []string `json:"avg_of"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(rep.Results) != 4 || rep.Results[0].Task != "mr" || rep.Results[0].Folds != 10 || len(rep.Results[0].L2) != 10 ||
		rep.Results[2].Task != "trec" || rep.Results[2].Train != 108 || strings.Join(rep.AvgOf, ",") != "mr,mrpc,sst2" {
		t.Errorf("report %+v", rep)
	}
	if want := (rep.Results[0].Accuracy + rep.Results[1].Accuracy + rep.Results[3].Accuracy) / 3; rep.Avg < want-1e-9 || rep.Avg > want+1e-9 {
		t.Errorf("avg %.4f, want the mean of mr, mrpc, sst2 %.4f", rep.Avg, want)
	}
	if !strings.Contains(stderr, "mr: ") || !strings.Contains(stderr, "texts embedded") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	// The same run again gives the same numbers; another seed other folds.
	_, again, _ := runCmd(t, args...)
	if strip := func(s string) string { return s[:strings.Index(s, `"embed_seconds"`)] }; strip(again) != strip(stdout) {
		t.Errorf("a second run differs:\n%s\n%s", stdout, again)
	}
	code, text, _ := runCmd(t, "eval-transfer", "--model", hf, "--data", data, "--tasks", "mr", "--seed", "7")
	if code != 0 || !strings.Contains(text, "10-fold CV of 1600") || !strings.Contains(text, "seed 7") {
		t.Errorf("text report (exit %d):\n%s", code, text)
	}

	code, stdout, stderr = runCmd(t, "eval-sts", "--model", hf, "--data", data, "--sets", "stsb,sts13,sickr", "--align-uniform")
	if code != 0 || !strings.Contains(stdout, "sts13/FNWN") || !strings.Contains(stdout, "sts13 (all)") ||
		!strings.Contains(stdout, "mean of stsb/test, sts13, sickr/test") || !strings.Contains(stdout, "uniformity") {
		t.Errorf("eval-sts exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, "eval-sts", "--model", hf, "--data", data, "--sets", "sts13", "--json")
	var sts struct {
		Results map[string]struct {
			N          int
			Spearman   float64
			SubsetMean float64 `json:"subset_mean"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &sts); code != 0 || err != nil {
		t.Fatalf("eval-sts --json exit %d, %v: %s", code, err, stdout)
	}
	// Three identical subsets: the 'all' correlation equals each one's.
	if all, one := sts.Results["sts13"], sts.Results["sts13/OnWN"]; all.N != 480 || one.N != 160 || all.Spearman-one.Spearman > 1e-9 || one.Spearman-all.Spearman > 1e-9 {
		t.Errorf("sts13 %+v, sts13/OnWN %+v", all, one)
	}

	// A CNN has no sentence embedding; --word-mean embeds with its words.
	dir := t.TempDir()
	tr, cnn := filepath.Join(dir, "train.csv"), filepath.Join(dir, "cnn")
	writeCSV(t, tr, 300, 1)
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "3", "--batch", "32", "--lr", "0.01", "--out", cnn, "--quiet"); code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "eval-transfer", "--model", cnn, "--data", data, "--tasks", "mr"); code != 2 || !strings.Contains(stderr, "--word-mean") {
		t.Errorf("CNN without --word-mean: exit %d, %q", code, stderr)
	}
	code, stdout, stderr = runCmd(t, "eval-transfer", "--model", cnn, "--data", data, "--tasks", "mr", "--word-mean", "--json")
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || rep.Results[0].Accuracy < 65 {
		t.Errorf("CNN word mean on MR: exit %d, %v, %s %s: want ≥ 65 %% (chance 50; the sentiment words were trained)", code, err, stdout, stderr)
	}
	if code, stdout, stderr := runCmd(t, "eval-sts", "--model", cnn, "--data", data, "--word-mean"); code != 0 || !strings.Contains(stdout, "stsb/test") {
		t.Errorf("eval-sts --word-mean: exit %d: %s%s", code, stdout, stderr)
	}
}

func TestEvalTransferAndSTSBadInput(t *testing.T) {
	data := sentevalData(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval-transfer", "--model", "m", "--data", data, "--tasks", "mr,sst5"}, 2, `unknown transfer task "sst5" (valid: mr, cr, subj, mpqa, sst2, mrpc, trec)`},
		{[]string{"eval-transfer", "--model", "m", "--data", data, "--tasks", "mr,mr"}, 2, "--tasks names mr twice"},
		{[]string{"eval-transfer", "--model", "m", "--data", data, "--tasks", "mr,"}, 2, "an empty name"},
		{[]string{"eval-transfer", "--model", "m", "--data", data, "--seed", "x"}, 2, `invalid value "x" for flag -seed`},
		{[]string{"eval-transfer", "--data", data}, 2, "--model is required"},
		{[]string{"eval-transfer", "--model", "m", "--data", data, "--tasks", "cr"}, 1, filepath.Join("cr", "custrev.pos")},
		{[]string{"eval-transfer", "--model", "no-model", "--data", data, "--tasks", "mr"}, 1, "no-model"},
		{[]string{"eval-transfer", "--model", "m", "--data", data, "stray"}, 2, "stray"},
		{[]string{"eval-sts", "--model", "m", "--data", data, "--split", "nope"}, 2, `--split "nope": want train, dev, test or all`},
		{[]string{"eval-sts", "--model", "m", "--data", data, "--sets", "all"}, 1, "STS12"},
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// A malformed line is reported with its file and line.
	if err := os.WriteFile(filepath.Join(data, "mrpc", "msr_paraphrase_test.txt"), []byte("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tonly a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "eval-transfer", "--model", "m", "--data", data, "--tasks", "mrpc"); code != 1 || !strings.Contains(stderr, "msr_paraphrase_test.txt:2: 4 columns") {
		t.Errorf("malformed MRPC line: exit %d, %q", code, stderr)
	}
}
