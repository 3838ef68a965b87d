package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// wantLineErr checks that err is a *LineError at path:line whose message
// contains msg.
func wantLineErr(t *testing.T, what string, err error, path string, line int, msg string) {
	t.Helper()
	var le *LineError
	if !errors.As(err, &le) {
		t.Errorf("%s: error %v, want a *LineError at %s:%d", what, err, path, line)
		return
	}
	if le.Path != path || le.Line != line || !strings.Contains(le.Msg, msg) {
		t.Errorf("%s: error %q, want %s:%d: ...%s...", what, err, path, line, msg)
	}
}

func TestLoadSTSB(t *testing.T) {
	dir := t.TempDir()
	// A 9-column row, a '"' that a CSV parser would take as an open quote,
	// a blank line, a CRLF line, and scores at both ends of the range.
	writeTemp(t, dir, "stsb/sts-dev.csv", ""+
		"main-captions\tMSRvid\t2012test\t0001\t5.000\tA plane is taking off.\tAn air plane is taking off.\n"+
		"main-news\theadlines\t2013\t0042\t0\tHe said \"no.\tShe said \"yes\".\tsrc-a\tsrc-b\n"+
		"\n"+
		"main-forums\tdeft-forum\t2014\t0007\t2.4\tx\ty\r\n")
	got, err := LoadSTSB(dir, "dev")
	if err != nil {
		t.Fatal(err)
	}
	want := []SimPair{
		{"A plane is taking off.", "An air plane is taking off.", 5},
		{`He said "no.`, `She said "yes".`, 0},
		{"x", "y", 2.4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if s := SimScores(got); !reflect.DeepEqual(s, []float64{5, 0, 2.4}) {
		t.Errorf("SimScores = %v", s)
	}

	if _, err := LoadSTSB(dir, "validation"); err == nil || !strings.Contains(err.Error(), "train, dev, test") {
		t.Errorf("unknown split: %v", err)
	}
	if _, err := LoadSTSB(dir, "train"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "stsb", "sts-train.csv")) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadSTSB("", "train"); err == nil {
		t.Error("no data folder: no error")
	}

	good := "g\tf\t2012\t1\t3.0\ta\tb\n"
	for _, tc := range []struct {
		name, row string
		msg       string
	}{
		{"8 columns", "g\tf\t2012\t2\t3.0\ta\tb\textra\n", "8 columns, want 7"},
		{"6 columns", "g\tf\t2012\t2\t3.0\ta b\n", "6 columns, want 7"},
		{"10 columns", "g\tf\t2012\t2\t3.0\ta\tb\tc\td\te\n", "10 columns"},
		{"score not a number", "g\tf\t2012\t2\tfive\ta\tb\n", `score "five" is not a number`},
		{"empty score", "g\tf\t2012\t2\t\ta\tb\n", `score "" is not a number`},
		{"score above 5", "g\tf\t2012\t2\t5.001\ta\tb\n", "outside [0, 5]"},
		{"negative score", "g\tf\t2012\t2\t-0.1\ta\tb\n", "outside [0, 5]"},
		{"NaN score", "g\tf\t2012\t2\tNaN\ta\tb\n", "outside [0, 5]"},
		{"infinite score", "g\tf\t2012\t2\t+Inf\ta\tb\n", "outside [0, 5]"},
		{"empty sentence 2", "g\tf\t2012\t2\t1\ta\t  \n", "sentence 2 is empty"},
		{"invalid UTF-8", "g\tf\t2012\t2\t1\ta\xff\tb\n", "sentence 1: invalid UTF-8"},
	} {
		p := writeTemp(t, dir, "stsb/sts-train.csv", good+good+tc.row+good)
		_, err := LoadSTSB(dir, "train")
		wantLineErr(t, tc.name, err, p, 3, tc.msg)
	}
	p := writeTemp(t, dir, "stsb/sts-test.csv", "\n\n")
	if _, err := LoadSTSB(dir, "test"); err == nil || !strings.Contains(err.Error(), p+": no pairs") {
		t.Errorf("empty file: %v", err)
	}
}

// writeSTSYear writes every subset of an STS year into dir, each with the
// given input and gs content.
func writeSTSYear(t *testing.T, dir string, year int, input, gs string) {
	t.Helper()
	subsets, err := STSSubsets(year)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subsets {
		writeTemp(t, dir, fmt.Sprintf("sts12-16/STS%d/STS.input.%s.txt", year%100, s), input)
		writeTemp(t, dir, fmt.Sprintf("sts12-16/STS%d/STS.gs.%s.txt", year%100, s), gs)
	}
}

func TestSTSSubsets(t *testing.T) {
	total := 0
	for year := 2012; year <= 2016; year++ {
		s, err := STSSubsets(year)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(s) || len(s) < 3 {
			t.Errorf("%d: subsets %q not sorted", year, s)
		}
		short, err := STSSubsets(year % 100)
		if err != nil || !reflect.DeepEqual(s, short) {
			t.Errorf("STSSubsets(%d) = %q, %v; want %q", year%100, short, err, s)
		}
		total += len(s)
	}
	if total != 24 {
		t.Errorf("%d subsets in all, want 24 (5 + 3 + 6 + 5 + 5)", total)
	}
	// The result is a copy.
	s, _ := STSSubsets(2013)
	s[0] = "changed"
	if s2, _ := STSSubsets(2013); s2[0] != "FNWN" {
		t.Errorf("STSSubsets returned shared storage: %q", s2)
	}
	for _, y := range []int{2011, 2017, 11, 17, 0, -2015} {
		if _, err := STSSubsets(y); err == nil || !strings.Contains(err.Error(), "2012..2016") {
			t.Errorf("year %d: %v", y, err)
		}
	}
}

func TestLoadSTS(t *testing.T) {
	dir := t.TempDir()
	// Lines 2 and 4 are unscored (an empty and a blank gs line); line 4's
	// sentences are even empty, which does not matter. Line 5 ends with CRLF
	// in both files.
	writeSTSYear(t, dir, 2015,
		"A cat sits.\tA cat is sitting.\nunscored\tpair\nHe said \"hi\tThey left.\n\t\nlast\tone\r\n",
		"4.8\n\n0\n  \n5.000\r\n")
	m, err := LoadSTS(dir, 2015)
	if err != nil {
		t.Fatal(err)
	}
	want := []SimPair{
		{"A cat sits.", "A cat is sitting.", 4.8},
		{`He said "hi`, "They left.", 0},
		{"last", "one", 5},
	}
	subsets, _ := STSSubsets(2015)
	if len(m) != len(subsets) {
		t.Errorf("%d subsets, want %d", len(m), len(subsets))
	}
	for _, s := range subsets {
		if !reflect.DeepEqual(m[s], want) {
			t.Errorf("%s: got %+v, want %+v", s, m[s], want)
		}
	}
	if m2, err := LoadSTS(dir, 15); err != nil || !reflect.DeepEqual(m2, m) {
		t.Errorf("LoadSTS(15) differs from LoadSTS(2015): %v", err)
	}

	// STS16 inputs have 2 source columns after the sentences.
	writeSTSYear(t, dir, 2016, "q1\tq2\tsrc1\tsrc2\nr1\tr2\tsrc1\tsrc2\n", "\n3\n")
	m, err = LoadSTS(dir, 2016)
	if err != nil {
		t.Fatal(err)
	}
	if got := m["question-question"]; !reflect.DeepEqual(got, []SimPair{{"r1", "r2", 3}}) {
		t.Errorf("STS16: got %+v", got)
	}

	if _, err := LoadSTS(dir, 2017); err == nil {
		t.Error("year 2017: no error")
	}
	// STS12 is not in dir: the error names the first missing file.
	if _, err := LoadSTS(dir, 2012); err == nil || !strings.Contains(err.Error(), "STS.input.MSRpar.txt") {
		t.Errorf("missing STS12: %v", err)
	}
	// One missing subset is an error too.
	writeSTSYear(t, dir, 2013, "a\tb\n", "1\n")
	if _, err := LoadSTS(dir, 2013); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sts12-16", "STS13", "STS.gs.OnWN.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSTS(dir, 2013); err == nil || !strings.Contains(err.Error(), "STS.gs.OnWN.txt") {
		t.Errorf("missing gs file: %v", err)
	}
}

func TestLoadSTSMalformed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "sts12-16", "STS14", "STS.input.headlines.txt")
	gs := filepath.Join(dir, "sts12-16", "STS14", "STS.gs.headlines.txt")
	for _, tc := range []struct {
		name, input, gs string
		path            string
		line            int
		msg             string
	}{
		{"gs longer", "a\tb\nc\td\n", "1\n2\n3\n", gs, 3, "no matching line in " + in + ", which has 2 lines (this file has 3)"},
		{"input longer", "a\tb\nc\td\ne\tf\n", "1\n2\n", in, 3, "no matching line in " + gs + ", which has 2 lines"},
		{"trailing empty gs line", "a\tb\n", "1\n\n", gs, 2, "not aligned"},
		{"bad score", "a\tb\nc\td\n", "1\n2,5\n", gs, 2, `score "2,5" is not a number`},
		{"score above 5", "a\tb\nc\td\n", "1\n5.5\n", gs, 2, "outside [0, 5]"},
		{"negative score", "a\tb\nc\td\n", "-1\n2\n", gs, 1, "outside [0, 5]"},
		{"3 columns", "a\tb\nc\td\te\n", "1\n2\n", in, 2, "3 columns, want 2"},
		{"1 column", "a\tb\nc d\n", "1\n2\n", in, 2, "1 columns, want 2"},
		{"wrong columns on an unscored line", "a\tb\nc\n", "1\n\n", in, 2, "1 columns, want 2"},
		{"STS16-style columns in STS14", "a\tb\ts1\ts2\n", "1\n", in, 1, "4 columns, want 2"},
		{"empty scored sentence", "a\tb\n\tz\n", "1\n2\n", in, 2, "sentence 1 is empty"},
		{"invalid UTF-8", "a\tb\nc\td\xc3\n", "1\n2\n", in, 2, "sentence 2: invalid UTF-8"},
	} {
		writeSTSYear(t, dir, 2014, "ok\tok\n", "1\n")
		writeTemp(t, dir, "sts12-16/STS14/STS.input.headlines.txt", tc.input)
		writeTemp(t, dir, "sts12-16/STS14/STS.gs.headlines.txt", tc.gs)
		_, err := LoadSTS(dir, 2014)
		wantLineErr(t, tc.name, err, tc.path, tc.line, tc.msg)
	}
	writeTemp(t, dir, "sts12-16/STS14/STS.input.headlines.txt", "a\tb\nc\td\n")
	writeTemp(t, dir, "sts12-16/STS14/STS.gs.headlines.txt", "\n\n")
	if _, err := LoadSTS(dir, 2014); err == nil || !strings.Contains(err.Error(), gs+": no scored pairs") {
		t.Errorf("all unscored: %v", err)
	}
	// STS16 wants its 4 columns.
	writeSTSYear(t, dir, 2016, "a\tb\n", "1\n")
	_, err := LoadSTS(dir, 2016)
	wantLineErr(t, "STS16 with 2 columns", err, filepath.Join(dir, "sts12-16", "STS16", "STS.input.answer-answer.txt"), 1, "2 columns, want 4")
}

func TestLoadSICKR(t *testing.T) {
	dir := t.TempDir()
	writeTemp(t, dir, "sick/SICK_train.txt", sickHeader+"\n"+
		"1\tA group of kids is playing.\tKids are playing.\t4.5\tENTAILMENT\n"+
		"\n"+
		"2\tA man is \"cooking\".\tNobody cooks.\t1\tCONTRADICTION\n")
	writeTemp(t, dir, "sick/SICK_trial.txt", sickHeader+"\n3\tx\ty\t5\tNEUTRAL\n")
	// The test file has CRLF line ends.
	writeTemp(t, dir, "sick/SICK_test_annotated.txt", sickHeader+"\r\n4\tp\tq\t3.3\tNEUTRAL\r\n5\tr\ts\t2.9\tNEUTRAL\r\n")
	for _, tc := range []struct {
		split string
		want  []SimPair
	}{
		{"train", []SimPair{{"A group of kids is playing.", "Kids are playing.", 4.5}, {`A man is "cooking".`, "Nobody cooks.", 1}}},
		{"trial", []SimPair{{"x", "y", 5}}},
		{"dev", []SimPair{{"x", "y", 5}}},
		{"test", []SimPair{{"p", "q", 3.3}, {"r", "s", 2.9}}},
	} {
		got, err := LoadSICKR(dir, tc.split)
		if err != nil {
			t.Fatalf("%s: %v", tc.split, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.split, got, tc.want)
		}
	}
	if _, err := LoadSICKR(dir, "test_annotated"); err == nil || !strings.Contains(err.Error(), "valid: train") {
		t.Errorf("unknown split: %v", err)
	}

	p := filepath.Join(dir, "sick", "SICK_train.txt")
	row := "9\ta\tb\t3\tNEUTRAL\n"
	for _, tc := range []struct {
		name, content string
		line          int
		msg           string
	}{
		{"no header", row + row, 1, "want the header"},
		{"other header", strings.Replace(sickHeader, "relatedness_score", "score", 1) + "\n" + row, 1, "want the header"},
		{"4 columns", sickHeader + "\n" + row + "9\ta\tb\t3\n", 3, "4 columns, want 5"},
		{"6 columns", sickHeader + "\n" + row + "9\ta\tb\t3\tNEUTRAL\tx\n", 3, "6 columns, want 5"},
		{"score below 1", sickHeader + "\n" + row + "9\ta\tb\t0.9\tNEUTRAL\n", 3, "outside [1, 5]"},
		{"score above 5", sickHeader + "\n" + row + "9\ta\tb\t5.1\tNEUTRAL\n", 3, "outside [1, 5]"},
		{"bad score", sickHeader + "\n" + row + "9\ta\tb\tNEUTRAL\t3\n", 3, `score "NEUTRAL" is not a number`},
		{"empty sentence", sickHeader + "\n" + row + "9\t\tb\t3\tNEUTRAL\n", 3, "sentence 1 is empty"},
	} {
		writeTemp(t, dir, "sick/SICK_train.txt", tc.content)
		_, err := LoadSICKR(dir, "train")
		wantLineErr(t, tc.name, err, p, tc.line, tc.msg)
	}
	writeTemp(t, dir, "sick/SICK_train.txt", sickHeader+"\n")
	if _, err := LoadSICKR(dir, "train"); err == nil || !strings.Contains(err.Error(), "no pairs") {
		t.Errorf("header only: %v", err)
	}
}

// README (stsb/, sts12-16/, sick/ rows): STS-B train 5,749, dev 1,500, test
// 1,379; STS12–16 scored pairs per subset as SentEval counts them; SICK
// train 4,500, trial 500, test 4,927.
func TestRealSTS(t *testing.T) {
	dir := dataDir(t)
	for _, s := range []struct {
		split string
		n     int
	}{{"train", 5749}, {"dev", 1500}, {"test", 1379}} {
		pairs, err := LoadSTSB(dir, s.split)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("STS-B %s: %d pairs", s.split, len(pairs))
		if len(pairs) != s.n {
			t.Errorf("STS-B %s: %d pairs, want %d", s.split, len(pairs), s.n)
		}
		quotes := 0
		for _, p := range pairs {
			if strings.ContainsAny(p.A+p.B, "\t\r\n") {
				t.Fatalf("STS-B %s: control character in %+v", s.split, p)
			}
			if strings.Contains(p.A+p.B, `"`) {
				quotes++
			}
		}
		// Rows with '"' are why the files are split on TAB, not CSV-parsed.
		if quotes == 0 {
			t.Errorf("STS-B %s: no sentence with '\"'", s.split)
		}
		if s.split == "train" && pairs[0] != (SimPair{"A plane is taking off.", "An air plane is taking off.", 5}) {
			t.Errorf("STS-B train first pair %+v", pairs[0])
		}
	}

	want := map[int]map[string]int{
		2012: {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750, "surprise.SMTnews": 399},
		2013: {"FNWN": 189, "headlines": 750, "OnWN": 561},
		2014: {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750, "OnWN": 750, "tweet-news": 750},
		2015: {"answers-forums": 375, "answers-students": 750, "belief": 375, "headlines": 750, "images": 750},
		2016: {"answer-answer": 254, "headlines": 249, "plagiarism": 230, "postediting": 244, "question-question": 209},
	}
	wantTotal := map[int]int{2012: 3108, 2013: 1500, 2014: 3750, 2015: 3000, 2016: 1186}
	for year := 2012; year <= 2016; year++ {
		m, err := LoadSTS(dir, year)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		total := 0
		for s, pairs := range m {
			got[s] = len(pairs)
			total += len(pairs)
		}
		t.Logf("STS%d: %d scored pairs %v", year%100, total, got)
		if !reflect.DeepEqual(got, want[year]) {
			t.Errorf("STS%d: subset counts %v, want %v", year%100, got, want[year])
		}
		if total != wantTotal[year] {
			t.Errorf("STS%d: %d scored pairs, want %d", year%100, total, wantTotal[year])
		}
	}

	for _, s := range []struct {
		split string
		n     int
	}{{"train", 4500}, {"trial", 500}, {"test", 4927}} {
		pairs, err := LoadSICKR(dir, s.split)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("SICK %s: %d pairs", s.split, len(pairs))
		if len(pairs) != s.n {
			t.Errorf("SICK %s: %d pairs, want %d", s.split, len(pairs), s.n)
		}
		for _, p := range pairs {
			if strings.ContainsAny(p.A+p.B, "\t\r\n") {
				t.Fatalf("SICK %s: control character in %+v (CRLF not stripped?)", s.split, p)
			}
		}
	}
}
