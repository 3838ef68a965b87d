package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
)

func TestCollectEveryKind(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, dir)
	r, err := Collect([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	tables := map[string]bool{}
	for _, s := range r.Sources {
		kinds[s.Kind]++
		if s.Table != "" {
			tables[s.Table] = true
		}
	}
	want := map[string]int{KindTable: 5, KindAttackCSV: 2, KindTrainLog: 2, KindEmbedAttack: 2}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if len(tables) != 5 {
		t.Errorf("tables %v, want all five kinds", tables)
	}
	if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0], "data.csv") {
		t.Errorf("skipped %q, want only runs/data.csv (the model folder is not entered)", r.Skipped)
	}

	// The CSV under the CARL table is its cell: drawn in the distributions
	// and examples, not as bars again.
	if len(r.Attacks) != 2 || !r.Attacks[0].Covered || r.Attacks[1].Covered {
		t.Fatalf("attacks %d, covered %v %v", len(r.Attacks), r.Attacks[0].Covered, r.Attacks[1].Covered)
	}
	a := r.Attacks[1]
	if a.Recipe != "textfooler" || a.Dataset != "sst2" || a.Summary.N != 4 || a.Summary.Successful != 2 {
		t.Errorf("attack run %+v", a.Summary)
	}
	if !slices.Equal(a.PerturbedPct, []float64{20, 25}) || !slices.Equal(a.Queries, []int{40, 12, 9}) {
		t.Errorf("perturbed %v queries %v", a.PerturbedPct, a.Queries)
	}
	if len(a.Examples) != 2 {
		t.Errorf("%d examples, want the 2 successes", len(a.Examples))
	}

	score := func(group, row, col string) float64 {
		t.Helper()
		for _, s := range r.Scores {
			if s.Group == group && s.Row == row && s.Column == col {
				return s.Value
			}
		}
		t.Errorf("no score %s/%s/%s", group, row, col)
		return -1
	}
	checks := []struct {
		group, row, col string
		want            float64
	}{
		{"attack results, sst2", "cnn", "clean", 75}, // row: the folder, the file being named after its recipe
		{"attack results, sst2", "cnn", "textfooler", 25},
		{"sst2", "plain", "clean", 86.6},
		{"sst2", "rar", "k-PGD ε 0.1", 64},
		{"sst2", "rar", "pwws", 15},
		{"imdb cnn", "ftml", "pwws", 20},
		{"trec cnn", "flat", "clean", 95},
		{"trec cnn", "base", "textfooler", 41.7},
		{"training methods", "spgd", "clean", 86.7},
		{"AdvSTS", "robustembed", "pwws/stsb", 40.1},
	}
	for _, c := range checks {
		if got := score(c.group, c.row, c.col); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("%s/%s/%s = %g, want %g", c.group, c.row, c.col, got, c.want)
		}
	}
	for _, s := range r.Scores {
		if strings.Contains(s.Row, "sst2-rar") {
			t.Errorf("the covered CSV drew a bar: %+v", s)
		}
	}

	if len(r.Curves) != 3 {
		t.Fatalf("%d curves, want CARL's plain and rar and the pgd files' one", len(r.Curves))
	}
	if c := r.Curves[0]; c.Series != "plain" || len(c.Points) != 3 || c.Points[0].Eps != 0 || math.Abs(c.Points[2].Accuracy-55) > 1e-9 {
		t.Errorf("first curve %+v", c)
	}
	pgd := r.Curves[2]
	if pgd.Group != "pgd, sst2" || pgd.Series != "cnn-pgd" || fmt.Sprint(pgd.Points) != "[{0 82 200} {0.05 70 200} {0.1 50 200}]" {
		t.Errorf("pgd curve %+v", pgd)
	}

	if len(r.Logs) != 2 || len(r.Logs[0].Runs) != 1 || len(r.Logs[1].Runs) != 2 || len(r.Logs[1].Runs[1]) != 2 {
		t.Errorf("logs %+v", r.Logs)
	}

	var b1, b2 bytes.Buffer
	if err := r.WriteHTML(&b1); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("two renders of one report differ")
	}
	page := b1.String()
	n, err := r.NumCharts()
	if err != nil {
		t.Fatal(err)
	}
	// Bars: 5 tables' groups (carl sst2, ftml, flat, spgd, robust) + the
	// pooled CSV; 2 histograms; 2 ε charts; 2 training charts.
	if n != 12 {
		t.Errorf("%d charts, want 12", n)
	}
	if divs := strings.Count(page, `<div class="chart" id="chart-`); divs != n {
		t.Errorf("%d chart divs, %d charts", divs, n)
	}
	if draws := len(regexp.MustCompile(`draw\("chart-\d+", \{`).FindAllString(page, -1)); draws != n {
		t.Errorf("%d draw calls, %d charts", draws, n)
	}
	for _, want := range []string{`<mark class="del">well-acted</mark>`, `<mark class="ins">well-played</mark>`,
		`<mark class="del">dull</mark>`, `<mark class="ins">du</mark> <mark class="ins">ll</mark>`, "2 of 2 successful attacks shown",
		"Accuracy against ε: k-PGD, sst2", "Training loss", "echarts"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Outside the library (which names the SVG namespaces), no address.
	if own := strings.Replace(page, echartsJS, "", 1); strings.Contains(own, "http:") || strings.Contains(own, "https:") || strings.Contains(own, "<script src") {
		t.Error("page references the network")
	}
}

// TestUntrustedTextEscaped: texts, file and folder names reach the page
// as text, never as markup or script, in the HTML and in the charts'
// options alike.
func TestUntrustedTextEscaped(t *testing.T) {
	dir := t.TempDir()
	evil := `</script><script>alert(1)</script><img src=x onerror=alert(2)>`
	rows := []row{{"good " + evil + " movie", "bad " + evil + " movie", 1, 1, 0, 5, attack.Successful, 10, 1}}
	sub := filepath.Join(dir, "a<script>alert(3)<b>")
	writeCSV(t, filepath.Join(sub, "pwws.csv"), "pwws", `sst2"<i>`, rows)
	writeTrainLog(t, filepath.Join(sub, "x.log.jsonl"), 2, false)
	r, err := Collect([]string{dir}, Options{Title: "<title>&", Examples: 5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(b.String(), echartsJS, "", 1)
	if got := strings.Count(page, "<script"); got != 2 {
		t.Errorf("%d <script tags, want the library's and the charts' only", got)
	}
	if got := strings.Count(page, "</script"); got != 2 {
		t.Errorf("%d </script, want 2", got)
	}
	for _, bad := range []string{"<img", "<b>", "<i>", "<title><title>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds raw %q", bad)
		}
	}
	if !strings.Contains(page, "&lt;img src=x onerror=alert(2)&gt;") {
		t.Error("the example text is not shown escaped")
	}
	for _, want := range []string{`"a\u003cscript\u003ealert(3)\u003cb\u003e"`, `sst2\"\u003ci\u003e`} {
		if !strings.Contains(page, want) {
			t.Errorf("chart options lack %s: a name is not escaped there", want)
		}
	}
}

func TestMarkChanges(t *testing.T) {
	show := func(ws []Word) string {
		var s []string
		for _, w := range ws {
			if w.Changed {
				s = append(s, "["+w.Text+"]")
			} else {
				s = append(s, w.Text)
			}
		}
		return strings.Join(s, " ")
	}
	cases := []struct{ orig, pert, wantO, wantP string }{
		{"a b c", "a x c", "a [b] c", "a [x] c"},
		{"a b c", "a b c", "a b c", "a b c"},
		{"the plot is dull", "the plot is du ll", "the plot is [dull]", "the plot is [du] [ll]"},
		{"one two three four", "one twothree four", "one [two] [three] four", "one [twothree] four"},
		{"", "", "", ""},
	}
	for _, c := range cases {
		o, p := markChanges(c.orig, c.pert)
		if show(o) != c.wantO || show(p) != c.wantP {
			t.Errorf("%q → %q: %q / %q, want %q / %q", c.orig, c.pert, show(o), show(p), c.wantO, c.wantP)
		}
	}
}

// TestExamplesCapped: a large results file shows the first N successes
// and the distributions of all rows.
func TestExamplesCapped(t *testing.T) {
	dir := t.TempDir()
	var rows []row
	for i := range 3000 {
		typ := attack.Successful
		if i%3 == 0 {
			typ = attack.Failed
		}
		rows = append(rows, row{fmt.Sprintf("text %d is fine", i), fmt.Sprintf("text %d is fne", i), 1, 1, 0, 10 + i%50, typ, 4, 1})
	}
	path := filepath.Join(dir, "big.csv")
	writeCSV(t, path, "", "", rows)
	for _, c := range []struct{ opt, want int }{{0, DefaultExamples}, {-1, 0}, {7, 7}, {5000, 2000}} {
		r, err := Collect([]string{path}, Options{Examples: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		a := r.Attacks[0]
		if len(a.Examples) != c.want || len(a.Queries) != 3000 || len(a.PerturbedPct) != 2000 {
			t.Errorf("examples %d: got %d examples, %d queries, %d perturbed", c.opt, len(a.Examples), len(a.Queries), len(a.PerturbedPct))
		}
	}
}

// TestBadInputs: each bad file is an error naming it (and the line where
// there is one), never a panic.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	header := strings.Join(attack.Columns, ",") + "\n"
	good := `"a b","a c",1,0,1,5,Successful,0,0.1,2,1,6` + "\n"
	writeFile(t, p("badrow.csv"), header+good+`"a b","a c",1,x,1,5,Successful,1,0.1,2,1,6`+"\n"+good)
	writeFile(t, p("badtype.csv"), header+good+`"a b","a c",1,0,1,5,Maybe,1,0.1,2,1,6`+"\n"+good)
	writeFile(t, p("other.csv"), "text,label\nhello,1\n")
	writeFile(t, p("empty.csv"), "")
	writeFile(t, p("bad.log.jsonl"), `{"epoch":1,"train_loss":1}`+"\n"+`{"epoch":2,"train_loss":}`+"\n"+`{"epoch":3,"train_loss":1}`+"\n")
	writeFile(t, p("notlog.jsonl"), `{"epoch":1,"train_loss":1}`+"\n"+`{"text":"hi","label":1}`+"\n")
	writeFile(t, p("empty.log.jsonl"), "")
	writeFile(t, p("t/table.json"), `{"cells": {"sst2": 1}, "checks": []}`)
	writeFile(t, p("u/table.json"), `{"rows": []}`)
	writeFile(t, p("v/table.json"), "{\n  \"cells\": [\n    {\"defense\": \"x\",,}\n  ]\n}")
	writeFile(t, p("w/table.json"), `{"dataset":"imdb","clean_n":1,"cells":[{"defense":"a","column":"clean","accuracy":1e999,"n":1}]}`)
	writeFile(t, p("config.json"), `{"vocab": 3}`)
	writeFile(t, p("list.json"), `[1, 2]`)
	writeFile(t, p("notes.txt"), "hello")
	cases := []struct{ path, want string }{
		{p("badrow.csv"), "badrow.csv:3"},
		{p("badtype.csv"), "badtype.csv:3"},
		{p("other.csv"), "other.csv: not an attack results file"},
		{p("empty.csv"), "empty.csv: empty file"},
		{p("bad.log.jsonl"), "bad.log.jsonl:2"},
		{p("notlog.jsonl"), "notlog.jsonl:2: not a training log line"},
		{p("empty.log.jsonl"), "empty.log.jsonl: empty training log"},
		{p("t/table.json"), "table.json"},
		{p("u/table.json"), "u/table.json: a table.json of no bench table"},
		{p("v/table.json"), "v/table.json:3"},
		{p("w/table.json"), "w/table.json"},
		{p("config.json"), "config.json: not a result file"},
		{p("list.json"), "list.json:1"},
		{p("notes.txt"), "notes.txt: not a result file"},
		{p("missing.csv"), "missing.csv"},
	}
	for _, c := range cases {
		_, err := Collect([]string{c.path}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", filepath.Base(c.path), err, c.want)
		}
	}
	if _, err := Collect(nil, Options{}); err == nil {
		t.Error("no inputs: no error")
	}
	// A folder's older results file is passed over, saying why.
	old := t.TempDir()
	writeFile(t, filepath.Join(old, "pwws.csv"), strings.Join(attack.Columns[:len(attack.Columns)-1], ",")+"\n")
	writeTrainLog(t, filepath.Join(old, "m.log.jsonl"), 1, false)
	if r, err := Collect([]string{old}, Options{}); err != nil {
		t.Errorf("older results file in a folder: %v", err)
	} else if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0], "older textarmor (no num_queries_with_repeats column)") {
		t.Errorf("older results file in a folder: skipped %q", r.Skipped)
	}
	empty := t.TempDir()
	writeFile(t, filepath.Join(empty, "readme.txt"), "hi")
	if _, err := Collect([]string{empty}, Options{}); err == nil || !strings.Contains(err.Error(), "no result files found") {
		t.Errorf("a folder with no results: %v", err)
	}
}

// TestCutLastLineTolerated: a log or results file whose last line a
// running job is writing reads as its complete lines.
func TestCutLastLineTolerated(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "m.log.jsonl")
	writeFile(t, log, `{"epoch":1,"train_loss":1,"train_acc":0.5,"dev_acc":0.5}`+"\n"+`{"epoch":2,"train_lo`)
	r, err := Collect([]string{log}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Logs[0].Runs[0]) != 1 {
		t.Errorf("runs %+v", r.Logs[0].Runs)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	writeTrainLog(t, filepath.Join(dir, "m.log.jsonl"), 3, false)
	r, err := Collect([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	if err := r.WriteFile(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("<!DOCTYPE html>")) || !bytes.HasSuffix(raw, []byte("</html>\n")) {
		t.Error("not a whole page")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("folder holds %d entries, want the log and the page (no temporary left)", len(entries))
	}
	if err := r.WriteFile(filepath.Join(dir, "no", "such", "dir", "r.html")); err == nil {
		t.Error("writing into a missing folder: no error")
	}
}

func TestHistogramBins(t *testing.T) {
	for _, c := range []struct {
		max   float64
		width float64
		bins  int
	}{{100, 5, 21}, {37, 2, 19}, {3, 0.2, 16}, {1200, 100, 13}, {0, 1, 1}} {
		h := newHistogram(c.max)
		if h.Width != c.width || h.Bins != c.bins {
			t.Errorf("max %g: width %g bins %d, want %g %d", c.max, h.Width, h.Bins, c.width, c.bins)
		}
	}
	h := newHistogram(10)
	s := h.shares([]float64{0, 0.4, 10, 3})
	if s[0] != 50 || s[len(s)-1] != 25 {
		t.Errorf("shares %v", s)
	}
}

func TestLabels(t *testing.T) {
	srcs := []Source{{Path: "a/x/pwws.csv"}, {Path: "b/x/pwws.csv"}, {Path: "c/y/pwws.csv"}, {Path: "t.csv"}}
	got := uniqueLabels(srcs)
	want := []string{"a/x/pwws.csv", "b/x/pwws.csv", "y/pwws.csv", "t.csv"}
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

// TestEmbedAttackInWorkingFolder: pgd summaries named relative to the
// working folder join a curve named after that folder, not ".".
func TestEmbedAttackInWorkingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "minilm")
	for _, e := range []float64{0.1, 0.05} {
		writeJSON(t, filepath.Join(dir, fmt.Sprintf("pgd-%g.json", e)), map[string]any{"attack": map[string]any{"eps": e}, "method": "pgd",
			"dataset": "sst2", "n": 10, "clean_accuracy": 0.9, "accuracy_under_attack": 0.5})
	}
	t.Chdir(dir)
	r, err := Collect([]string{"pgd-0.1.json", "pgd-0.05.json"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Curves) != 1 || r.Curves[0].Series != "minilm" || len(r.Curves[0].Points) != 3 || r.Curves[0].Points[1].Eps != 0.05 {
		t.Errorf("curves %+v", r.Curves)
	}
}
