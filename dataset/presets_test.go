package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureDir writes a miniature shared/data folder and returns it.
func fixtureDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w := func(rel, content string) { writeTemp(t, dir, rel, content) }
	w("sst2-glue/train.tsv", "sentence\tlabel\nhide new secretions \t0\nthe rock is \" conan \" \t1\nfun \t1\n")
	w("sst2-glue/dev.tsv", "sentence\tlabel\nit 's a charming journey . \t1\nunflinchingly bleak \t0\n")
	w("sst2-stsa/stsa.binary.train", "1 a stirring , funny film .\n0 apparently reassembled from the cutting-room floor\n")
	w("sst2-stsa/stsa.binary.dev", "1 it 's a charming journey .\n")
	w("sst2-stsa/stsa.binary.test", "0 no movement , no yuks .\n1 a gorgeous film .\n0 crème brûlée\n")
	var mr strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&mr, "%d\tmr sentence %d\n", 1-i/10, i)
	}
	w("mr/rt-polarity.utf8.tsv", mr.String())
	var trec strings.Builder
	for i, c := range []string{"DESC:manner", "ENTY:animal", "ABBR:exp", "HUM:ind", "LOC:city", "NUM:date"} {
		for j := 0; j < 10*(i+1); j++ {
			fmt.Fprintf(&trec, "%s What question %d %d ?\n", c, i, j)
		}
	}
	trec.WriteString("LOC:city Which city is a sister\xf0city ?\n")
	w("trec/TREC.train", trec.String())
	w("trec/TREC.test", "NUM:date When ?\nABBR:exp What is AIDS ?\n")
	var ag strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&ag, "\"%d\",\"Title %d\",\"first\\second \"\"quoted\"\", line\"\n", i%4+1, i)
	}
	w("agnews/test.csv", ag.String())
	// MRPC: a byte order mark, the header, unescaped quotes.
	var mrpc strings.Builder
	mrpc.WriteString("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&mrpc, "%d\t%d\t%d\tFirst \"sentence\" %d.\tSecond sentence %d.\n", i%2, 100+i, 200+i, i, i)
	}
	w("mrpc/msr_paraphrase_train.txt", mrpc.String())
	w("mrpc/msr_paraphrase_test.txt", "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tA b.\tB a.\n0\t3\t4\tC d.\tD c.\n1\t5\t6\tE f.\tF e.\n")
	// SNLI: 10 premises with 3 hypotheses each in dev (and one pair
	// without a gold label), SentEval's trailing spaces.
	var s1, s2, labels strings.Builder
	for i := 0; i < 10; i++ {
		for j, l := range []string{"entailment", "neutral", "contradiction"} {
			fmt.Fprintf(&s1, "Premise %d . \n", i)
			fmt.Fprintf(&s2, "Hypothesis %d %d . \n", i, j)
			fmt.Fprintf(&labels, "%s\n", l)
		}
	}
	s1.WriteString("Unlabelled premise . \n")
	s2.WriteString("Unlabelled hypothesis . \n")
	labels.WriteString("-\n")
	w("snli/s1.dev", s1.String())
	w("snli/s2.dev", s2.String())
	w("snli/labels.dev", labels.String())
	w("snli/s1.test", "A man . \nA man . \nA dog . \nA cat . \n")
	w("snli/s2.test", "A person . \nA woman . \nAn animal . \nA dog . \n")
	w("snli/labels.test", "entailment\ncontradiction\nentailment\nneutral\n")
	// IMDB: train part k holds neg/k_1.txt, pos/k_9.txt and one more pair.
	var trainList, devList strings.Builder
	for _, split := range []string{"train", "test"} {
		for k := 0; k < 5; k++ {
			var part strings.Builder
			for j := 0; j < 2; j++ {
				id := 10*k + j
				fmt.Fprintf(&part, "0\t1\t%s/neg/%d_1.txt\t%s neg review %d<br /><br />bad.\n", split, id, split, id)
				fmt.Fprintf(&part, "1\t9\t%s/pos/%d_9.txt\t%s pos review %d\n", split, id, split, id)
				if split == "train" {
					dst := &trainList
					if k == 4 {
						dst = &devList
					}
					fmt.Fprintf(dst, "neg/%d_1.txt\npos/%d_9.txt\n", id, id)
				}
			}
			w(fmt.Sprintf("imdb/%s.part-%02d.tsv.gz", split, k), part.String())
		}
	}
	w("counterfitted-neighbors-jia2019/imdb_train_files.txt", trainList.String())
	w("counterfitted-neighbors-jia2019/imdb_dev_files.txt", devList.String())
	return dir
}

func TestPresetsFixture(t *testing.T) {
	dir := fixtureDir(t)
	tests := []struct {
		name             string
		train, dev, test int
		classes          []string
		check            func(t *testing.T, ds *Dataset)
	}{
		{"sst2", 3, 2, 3, negPos, func(t *testing.T, ds *Dataset) {
			if !reflect.DeepEqual(ds.Train[1], ex(`the rock is " conan "`, 1)) {
				t.Errorf("GLUE line with quotes / trailing space: %q", ds.Train[1].Text)
			}
			if ds.Test[2] != ex("crème brûlée", 0) || ds.Dev[0] != ex("it 's a charming journey .", 1) {
				t.Errorf("test/dev %+v %+v", ds.Test[2], ds.Dev[0])
			}
		}},
		{"sst2-sent", 2, 1, 3, negPos, func(t *testing.T, ds *Dataset) {
			if ds.Train[1] != ex("apparently reassembled from the cutting-room floor", 0) {
				t.Errorf("%+v", ds.Train[1])
			}
		}},
		{"mr", 16, 2, 2, negPos, func(t *testing.T, ds *Dataset) {
			for _, s := range [][]Example{ds.Dev, ds.Test} {
				if c := labelCounts(s); c[0] != 1 || c[1] != 1 {
					t.Errorf("not stratified: %v", c)
				}
			}
		}},
		{"trec", 194, 17, 2, trecClasses, func(t *testing.T, ds *Dataset) {
			if ds.Test[0] != ex("When ?", 5) || ds.Test[1] != ex("What is AIDS ?", 2) {
				t.Errorf("test %+v", ds.Test)
			}
			found := false
			for _, e := range append(append([]Example{}, ds.Train...), ds.Dev...) {
				if e.Text == "Which city is a sister\u00f0city ?" && e.Label == 4 {
					found = true
				}
			}
			if !found {
				t.Error("Latin-1 line not decoded")
			}
		}},
		{"agnews", 32, 4, 4, agClasses, func(t *testing.T, ds *Dataset) {
			for _, e := range ds.Train {
				if !strings.HasPrefix(e.Text, "Title ") || !strings.HasSuffix(e.Text, ` . first second "quoted", line`) {
					t.Fatalf("text %q", e.Text)
				}
			}
			if c := labelCounts(ds.Test); !reflect.DeepEqual(c, map[int]int{0: 1, 1: 1, 2: 1, 3: 1}) {
				t.Errorf("test labels %v", c)
			}
		}},
		{"imdb", 16, 4, 20, negPos, func(t *testing.T, ds *Dataset) {
			if ds.Train[0] != ex("train neg review 0<br /><br />bad.", 0) || ds.Train[1] != ex("train pos review 0", 1) {
				t.Errorf("train %+v", ds.Train[:2])
			}
			if ds.Dev[0].Text != "train neg review 40<br /><br />bad." || ds.Test[19] != ex("test pos review 41", 1) {
				t.Errorf("dev/test %+v %+v", ds.Dev[0], ds.Test[19])
			}
		}},
		{"mrpc", 18, 2, 3, mrpcClasses, func(t *testing.T, ds *Dataset) {
			if ds.Test[0] != (Example{Text: "A b.", Text2: "B a.", Label: 1}) || ds.Test[1].Label != 0 {
				t.Errorf("test %+v", ds.Test)
			}
			for _, e := range append(ds.Train, ds.Dev...) {
				if !strings.HasPrefix(e.Text, `First "sentence" `) || !strings.HasPrefix(e.Text2, "Second sentence ") {
					t.Fatalf("pair %+v", e)
				}
			}
			if c := labelCounts(ds.Dev); c[0] != 1 || c[1] != 1 {
				t.Errorf("dev not stratified: %v", c)
			}
		}},
		{"snli", 27, 3, 4, snliClasses, func(t *testing.T, ds *Dataset) {
			if ds.Test[3] != (Example{Text: "A cat .", Text2: "A dog .", Label: 1}) || ds.Test[1].Label != 2 {
				t.Errorf("test %+v", ds.Test)
			}
			premise := ds.Dev[0].Text
			for _, e := range ds.Dev {
				if e.Text != premise {
					t.Errorf("dev holds more than one premise: %+v", ds.Dev)
				}
			}
			for _, e := range ds.Train {
				if e.Text == premise || strings.Contains(e.Text, "Unlabelled") {
					t.Errorf("train pair %+v", e)
				}
			}
			if !strings.Contains(strings.Join(ds.Notes, "\n"), "dropped: 1 in dev, 0 in test") {
				t.Errorf("notes %q", ds.Notes)
			}
		}},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen[tc.name] = true
			ds, err := Load(tc.name, dir)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Name != tc.name || len(ds.Train) != tc.train || len(ds.Dev) != tc.dev || len(ds.Test) != tc.test {
				t.Fatalf("%s: %d/%d/%d", ds.Name, len(ds.Train), len(ds.Dev), len(ds.Test))
			}
			if !reflect.DeepEqual(ds.Classes, tc.classes) || len(ds.Notes) == 0 {
				t.Errorf("classes %q notes %q", ds.Classes, ds.Notes)
			}
			for _, s := range [][]Example{ds.Train, ds.Dev, ds.Test} {
				for _, e := range s {
					if e.Label < 0 || e.Label >= len(ds.Classes) || e.Text == "" {
						t.Fatalf("bad example %+v", e)
					}
				}
			}
			tc.check(t, ds)
		})
	}
	for _, p := range Presets() {
		if !seen[p.Name] {
			t.Errorf("preset %s not covered by the fixture test", p.Name)
		}
	}
}

func TestPresetMissingFiles(t *testing.T) {
	files := map[string][]string{
		"sst2":      {"sst2-glue/train.tsv", "sst2-glue/dev.tsv", "sst2-stsa/stsa.binary.test"},
		"sst2-sent": {"sst2-stsa/stsa.binary.train", "sst2-stsa/stsa.binary.dev", "sst2-stsa/stsa.binary.test"},
		"mr":        {"mr/rt-polarity.utf8.tsv"},
		"trec":      {"trec/TREC.train", "trec/TREC.test"},
		"agnews":    {"agnews/test.csv"},
		"mrpc":      {"mrpc/msr_paraphrase_train.txt", "mrpc/msr_paraphrase_test.txt"},
		"snli":      {"snli/s1.dev", "snli/s2.dev", "snli/labels.dev", "snli/s1.test", "snli/s2.test", "snli/labels.test"},
		"imdb": {"imdb/train.part-03.tsv.gz", "imdb/test.part-00.tsv.gz",
			"counterfitted-neighbors-jia2019/imdb_train_files.txt", "counterfitted-neighbors-jia2019/imdb_dev_files.txt"},
	}
	for preset, rels := range files {
		for _, rel := range rels {
			dir := fixtureDir(t)
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				t.Fatal(err)
			}
			_, err := Load(preset, dir)
			if err == nil {
				t.Errorf("%s without %s: no error", preset, rel)
				continue
			}
			for _, want := range []string{"preset " + preset, rel, filepath.Join(dir, filepath.FromSlash(rel))} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s without %s: error %q lacks %q", preset, rel, err, want)
				}
			}
		}
	}
}

func TestPresetBadLines(t *testing.T) {
	tests := []struct {
		preset, rel, content string
		line                 int
		msg                  string
	}{
		{"sst2", "sst2-glue/train.tsv", "sentence\tlabel\nok \t1\nno label\n", 3, "1 columns, want 2"},
		{"sst2", "sst2-glue/train.tsv", "text\tlabel\nok \t1\n", 1, "want the header"},
		{"sst2", "sst2-glue/dev.tsv", "sentence\tlabel\nok \t2\n", 2, `label "2", want 0 or 1`},
		{"sst2-sent", "sst2-stsa/stsa.binary.train", "1 fine\n1\n", 2, "no ' ' separator"},
		{"sst2-sent", "sst2-stsa/stsa.binary.dev", "1 bad \xff\n", 1, "invalid UTF-8"},
		{"sst2-sent", "sst2-stsa/stsa.binary.test", "0  \n", 1, "empty text"},
		{"mr", "mr/rt-polarity.utf8.tsv", "1\tgood\npos\tbad\n", 2, `label "pos"`},
		{"trec", "trec/TREC.train", "DESC:manner How ?\nQUUX:x What ?\n", 2, `unknown coarse label "QUUX"`},
		{"trec", "trec/TREC.test", "no label here\n", 1, "COARSE:fine"},
		{"agnews", "agnews/test.csv", "\"1\",\"t\",\"d\"\n\"5\",\"t\",\"d\"\n", 2, `class "5", want 1..4`},
		{"agnews", "agnews/test.csv", "\"1\",\"t\"\n", 1, "2 fields, want 3"},
		{"agnews", "agnews/test.csv", "\"1\",\"t\",\"d\"\n\"2\",\"t\"x,\"d\"\n", 2, "extraneous or missing \" in quoted-field"},
		{"mrpc", "mrpc/msr_paraphrase_train.txt", "Quality\t#1 ID\t#2 ID\t#1 String\n", 1, "want the header"},
		{"mrpc", "mrpc/msr_paraphrase_test.txt", "\ufeff" + mrpcHeader + "\n1\t1\t2\ta\tb\n1\t1\t2\ta\n", 3, "4 columns, want 5"},
		{"mrpc", "mrpc/msr_paraphrase_test.txt", mrpcHeader + "\n2\t1\t2\ta\tb\n", 2, `label "2", want 0 or 1`},
		{"mrpc", "mrpc/msr_paraphrase_test.txt", mrpcHeader + "\n1\tx1\t2\ta\tb\n", 2, `#1 ID "x1" is not a number`},
		{"mrpc", "mrpc/msr_paraphrase_test.txt", mrpcHeader + "\n1\t1\t2\ta\t \n", 2, "empty second sentence"},
		{"mrpc", "mrpc/msr_paraphrase_train.txt", mrpcHeader + "\n1\t1\t2\t \tb\n", 2, "empty text"},
		{"snli", "snli/labels.test", "entailment\nneutral\nmaybe\nneutral\n", 3, `label "maybe"`},
		{"snli", "snli/s2.test", "a\nb\n\nd\n", 3, "empty sentence"},
		{"snli", "snli/s1.test", "a\nb\n\xff\nd\n", 3, "invalid UTF-8"},
		{"imdb", "imdb/train.part-02.tsv.gz", "0\t1\ttrain/neg/20_1.txt\tok\n1\t9\ttrain/neg/21_1.txt\tmismatch\n", 2, "does not match label 1"},
		{"imdb", "imdb/test.part-00.tsv.gz", "0\t1\ttest/neg/0_1.txt\n", 1, "3 columns, want 4"},
		{"imdb", "counterfitted-neighbors-jia2019/imdb_dev_files.txt", "neg/40_1.txt\nneg/999_1.txt\n", 2, "train/neg/999_1.txt is not in the IMDB part files"},
		{"imdb", "counterfitted-neighbors-jia2019/imdb_dev_files.txt", "neg/40_1.txt\nneg/0_1.txt\n", 2, "listed twice"},
	}
	for _, tc := range tests {
		dir := fixtureDir(t)
		p := writeTemp(t, dir, tc.rel, tc.content)
		_, err := Load(tc.preset, dir)
		var le *LineError
		if !errors.As(err, &le) || le.Path != p || le.Line != tc.line || !strings.Contains(le.Msg, tc.msg) {
			t.Errorf("%s %s: error %v, want %s:%d: ...%s", tc.preset, tc.rel, err, p, tc.line, tc.msg)
		}
	}
}

func TestLookupPreset(t *testing.T) {
	want := map[string]Preset{
		"sst2":      {Name: "sst2", Tokenizer: "flat", MaxLen: 50, MinCount: 1},
		"sst2-sent": {Name: "sst2-sent", Tokenizer: "flat", MaxLen: 50, MinCount: 1},
		"imdb":      {Name: "imdb", Tokenizer: "flat", MaxLen: 250, MinCount: 6},
		"mr":        {Name: "mr", Tokenizer: "flat", MaxLen: 50, MinCount: 1},
		"trec":      {Name: "trec", Tokenizer: "flat", MaxLen: 15, MinCount: 1},
		"agnews":    {Name: "agnews", Tokenizer: "flat", MaxLen: 50, MinCount: 6},
		"mrpc":      {Name: "mrpc", Tokenizer: "flat", MaxLen: 128, MinCount: 1},
		"snli":      {Name: "snli", Tokenizer: "flat", MaxLen: 128, MinCount: 1},
	}
	ps := Presets()
	if len(ps) != len(want) {
		t.Fatalf("%d presets", len(ps))
	}
	for _, p := range ps {
		got, err := LookupPreset(p.Name)
		if err != nil || got != p {
			t.Errorf("LookupPreset(%q) = %+v, %v", p.Name, got, err)
		}
		w, ok := want[p.Name]
		if !ok || p.Description == "" {
			t.Errorf("unexpected preset %+v", p)
			continue
		}
		w.Description = p.Description
		if p != w {
			t.Errorf("preset %+v, want %+v", p, w)
		}
	}
	// Presets returns copies.
	ps[0].MaxLen = 999
	if p, _ := LookupPreset(ps[0].Name); p.MaxLen == 999 {
		t.Error("Presets exposed internal state")
	}
	_, err := LookupPreset("yelp")
	if err == nil || !strings.Contains(err.Error(), "yelp") || !strings.Contains(err.Error(), "sst2, sst2-sent, imdb, mr, trec, agnews") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err := Load("yelp", t.TempDir()); err == nil || !strings.Contains(err.Error(), "valid:") {
		t.Errorf("Load unknown: %v", err)
	}
	if _, err := Load("sst2", ""); err == nil {
		t.Error("Load with empty dir: no error")
	}
}
