package dataset

import (
	"errors"
	"strings"
	"testing"
)

// transferFixture writes the SentEval transfer files in their formats:
// trailing spaces, blank lines, cat -v escapes, a Latin-1 byte, MRPC's BOM
// and header.
func transferFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w := func(rel, content string) { writeTemp(t, dir, rel, content) }
	w("mr/rt-polarity.utf8.tsv", "1\tthe rock is destined to be great\n0\tsimplistic , silly and tedious\n1\tcrème brûlée\n")
	w("cr/custrev.pos", "im a more happier person ! . \n\nit plays almost everything . \n")
	w("cr/custrev.neg", "the remote is bad . \n \n")
	w("subj/subj.objective", "the movie begins in the past . \nsam M-i attempts to save celebi .\n")
	w("subj/subj.subjective", "smart and alert , thirteen conversations\n")
	w("mpqa/mpqa.pos", "good\nhigh\xe9 praise \n")
	w("mpqa/mpqa.neg", "complaining \n\nfailing to support \n")
	w("mrpc/msr_paraphrase_train.txt", "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"+
		"1\t702876\t702977\tAmrozi accused his brother, whom he called \"the witness\", of lying.\tReferring to him as only \"the witness\", Amrozi accused his brother.\n"+
		"0\t2108705\t2108831\tYucaipa owned Dominick's.\tYucaipa bought Dominick's in 1995.\n\n")
	w("mrpc/msr_paraphrase_test.txt", "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tA b.\tA b c.\n")
	return dir
}

func TestLoadCVSetFormats(t *testing.T) {
	dir := transferFixture(t)
	for _, c := range []struct {
		name   string
		texts  []string
		labels []int
		class1 string
	}{
		{"mr", []string{"the rock is destined to be great", "simplistic , silly and tedious", "crème brûlée"}, []int{1, 0, 1}, "positive"},
		{"cr", []string{"im a more happier person ! .", "it plays almost everything .", "the remote is bad ."}, []int{1, 1, 0}, "positive"},
		{"subj", []string{"the movie begins in the past .", "sam M-i attempts to save celebi .", "smart and alert , thirteen conversations"}, []int{1, 1, 0}, "objective"},
		{"mpqa", []string{"good", "highé praise", "complaining", "failing to support"}, []int{1, 1, 0, 0}, "positive"},
	} {
		ex, classes, err := LoadCVSet(dir, c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(classes) != 2 || classes[1] != c.class1 {
			t.Errorf("%s: classes %q", c.name, classes)
		}
		var texts []string
		var labels []int
		for _, e := range ex {
			texts, labels = append(texts, e.Text), append(labels, e.Label)
		}
		if strings.Join(texts, "|") != strings.Join(c.texts, "|") || len(labels) != len(c.labels) {
			t.Errorf("%s: texts %q, want %q", c.name, texts, c.texts)
			continue
		}
		for i := range labels {
			if labels[i] != c.labels[i] {
				t.Errorf("%s: labels %v, want %v", c.name, labels, c.labels)
				break
			}
		}
	}
	if _, _, err := LoadCVSet(dir, "sst5"); err == nil || !strings.Contains(err.Error(), "mr, cr, subj, mpqa") {
		t.Errorf("unknown set: %v", err)
	}
	if _, _, err := LoadCVSet(t.TempDir(), "cr"); err == nil || !strings.Contains(err.Error(), "custrev.pos") {
		t.Errorf("missing file: %v, want it named", err)
	}
	// One class only.
	writeTemp(t, dir, "cr/custrev.neg", "\n")
	if _, _, err := LoadCVSet(dir, "cr"); err == nil || !strings.Contains(err.Error(), "custrev.neg: no sentences") {
		t.Errorf("empty negative file: %v", err)
	}
	writeTemp(t, dir, "mr/rt-polarity.utf8.tsv", "1\tgood\n2\tbad\n")
	var le *LineError
	if _, _, err := LoadCVSet(dir, "mr"); !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("bad MR label: %v, want a LineError at line 2", err)
	}
}

func TestLoadMRPC(t *testing.T) {
	dir := transferFixture(t)
	tr, err := LoadMRPC(dir, "train")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 2 || tr[0].Label != 1 || tr[1].Label != 0 || !strings.HasPrefix(tr[0].A, "Amrozi accused") ||
		tr[0].B != "Referring to him as only \"the witness\", Amrozi accused his brother." || tr[1].B != "Yucaipa bought Dominick's in 1995." {
		t.Errorf("train %+v", tr)
	}
	if te, err := LoadMRPC(dir, "test"); err != nil || len(te) != 1 {
		t.Errorf("test %+v, %v", te, err)
	}
	if _, err := LoadMRPC(dir, "dev"); err == nil || !strings.Contains(err.Error(), "valid: train, test") {
		t.Errorf("dev split: %v", err)
	}
	hdr := "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
	for _, c := range []struct {
		content string
		line    int
		want    string
	}{
		{"Quality\tID\n", 1, "want the header"},
		{hdr + "1\t1\t2\tonly four\n", 2, "4 columns"},
		{hdr + "1\t1\t2\ta\tb\n2\t1\t2\ta\tb\n", 3, `label "2", want 0 or 1`},
		{hdr + "1\t1\t2\t \tb\n", 2, "empty text"},
		{hdr + "0\t1\t2\ta\t\xff\n", 2, "invalid UTF-8"},
		{hdr + "0\tx\t2\ta\tb\n", 2, "#1 ID"},
	} {
		writeTemp(t, dir, "mrpc/msr_paraphrase_test.txt", c.content)
		_, err := LoadMRPC(dir, "test")
		var le *LineError
		if !errors.As(err, &le) || le.Line != c.line || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "msr_paraphrase_test.txt:") {
			t.Errorf("%q: %v, want line %d: %s", c.content, err, c.line, c.want)
		}
	}
	writeTemp(t, dir, "mrpc/msr_paraphrase_test.txt", hdr)
	if _, err := LoadMRPC(dir, "test"); err == nil || !strings.Contains(err.Error(), "no pairs") {
		t.Errorf("header only: %v", err)
	}
}

// TestTransferSetsReal: the shared files give SentEval's counts (less the
// skipped blank lines of CR and MPQA) and MRPC's.
func TestTransferSetsReal(t *testing.T) {
	dir := dataDir(t)
	for _, c := range []struct {
		name     string
		pos, neg int
	}{{"mr", 5331, 5331}, {"cr", 2405, 1366}, {"subj", 5000, 5000}, {"mpqa", 3311, 7292}} {
		ex, _, err := LoadCVSet(dir, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if n := counts(ex, 2); n[1] != c.pos || n[0] != c.neg {
			t.Errorf("%s: %d class 1, %d class 0; want %d, %d", c.name, n[1], n[0], c.pos, c.neg)
		}
	}
	for split, want := range map[string][2]int{"train": {2753, 1323}, "test": {1147, 578}} {
		p, err := LoadMRPC(dir, split)
		if err != nil {
			t.Fatal(err)
		}
		pos := 0
		for _, x := range p {
			pos += x.Label
		}
		if pos != want[0] || len(p)-pos != want[1] {
			t.Errorf("mrpc %s: %d / %d, want %v", split, pos, len(p)-pos, want)
		}
	}
}
