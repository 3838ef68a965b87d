package dataset

import (
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTemp writes content to dir/name (gzipped when name ends in .gz).
func writeTemp(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte(content)
	if strings.HasSuffix(name, ".gz") {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ex(text string, label int) Example { return Example{Text: text, Label: label} }

func TestLoadFile(t *testing.T) {
	tests := []struct {
		name, file, content string
		opt                 FileOptions
		want                []Example
		classes             []string
	}{
		{"tsv header, 0/1 kept numeric", "a.tsv", "text\tlabel\ngood \"quoted\" film\t1\nbad\t0\n", FileOptions{},
			[]Example{ex(`good "quoted" film`, 1), ex("bad", 0)}, []string{"0", "1"}},
		{"tsv named columns in any order", "a.tsv", "id\tlabel\tsentence\n1\tpos\tfine\n2\tneg\tawful\n", FileOptions{TextCol: "sentence"},
			[]Example{ex("fine", 1), ex("awful", 0)}, []string{"neg", "pos"}},
		{"header names are case-insensitive as a fallback", "a.tsv", "Text\tLABEL\nx\t0\n", FileOptions{},
			[]Example{ex("x", 0)}, []string{"0"}},
		{"tsv index columns, no header", "a.tsv", "1\tgood\n0\tbad\n", FileOptions{TextCol: "1", LabelCol: "0"},
			[]Example{ex("good", 1), ex("bad", 0)}, []string{"0", "1"}},
		{"tsv index columns with Header", "a.tsv", "label\ttext\n1\tgood\n", FileOptions{TextCol: "1", LabelCol: "0", Header: true},
			[]Example{ex("good", 0)}, []string{"1"}},
		{"CRLF, BOM, blank lines", "a.tsv", "\ufefftext\tlabel\r\n\r\nx\t1\r\n  \r\ny\t0", FileOptions{},
			[]Example{ex("x", 1), ex("y", 0)}, []string{"0", "1"}},
		{"1-based labels are renumbered in numeric order", "a.tsv", "text\tlabel\na\t10\nb\t2\nc\t1\n", FileOptions{},
			[]Example{ex("a", 2), ex("b", 1), ex("c", 0)}, []string{"1", "2", "10"}},
		{"gap in integer labels is renumbered", "a.tsv", "text\tlabel\na\t0\nb\t2\n", FileOptions{},
			[]Example{ex("a", 0), ex("b", 1)}, []string{"0", "2"}},
		{"-1/+1 labels", "a.tsv", "text\tlabel\na\t+1\nb\t-1\n", FileOptions{},
			[]Example{ex("a", 1), ex("b", 0)}, []string{"-1", "1"}},
		{"string labels sorted", "a.tsv", "text\tlabel\na\tsports\nb\tworld\nc\tbusiness\n", FileOptions{},
			[]Example{ex("a", 1), ex("b", 2), ex("c", 0)}, []string{"business", "sports", "world"}},
		{"fixed classes by name", "a.tsv", "text\tlabel\na\tpos\nb\tneg\n", FileOptions{Classes: []string{"pos", "neg"}},
			[]Example{ex("a", 0), ex("b", 1)}, []string{"pos", "neg"}},
		{"fixed classes by index", "a.tsv", "text\tlabel\na\t1\nb\t0\n", FileOptions{Classes: []string{"negative", "positive"}},
			[]Example{ex("a", 1), ex("b", 0)}, []string{"negative", "positive"}},
		{"fixed numeric classes match by name", "a.tsv", "text\tlabel\na\t1\nb\t4\n", FileOptions{Classes: []string{"1", "2", "3", "4"}},
			[]Example{ex("a", 0), ex("b", 3)}, []string{"1", "2", "3", "4"}},
		{"labels trimmed and canonical", "a.tsv", "text\tlabel\na\t 01 \n", FileOptions{Classes: []string{"0", "1"}},
			[]Example{ex("a", 1)}, []string{"0", "1"}},
		{"text kept raw", "a.tsv", "text\tlabel\n  Spaced  out <br /> \t0\n", FileOptions{},
			[]Example{ex("  Spaced  out <br /> ", 0)}, []string{"0"}},
		{"gzip tsv", "a.tsv.gz", "text\tlabel\nx\t0\n", FileOptions{},
			[]Example{ex("x", 0)}, []string{"0"}},
		{"explicit format overrides extension", "a.txt", "text\tlabel\nx\t0\n", FileOptions{Format: "TSV"},
			[]Example{ex("x", 0)}, []string{"0"}},

		{"csv quoting", "a.csv", "label,text\n1,\"hello, \"\"world\"\"\"\n0,plain\n", FileOptions{},
			[]Example{ex(`hello, "world"`, 1), ex("plain", 0)}, []string{"0", "1"}},
		{"csv multi-line field", "a.csv", "text,label\n\"two\nlines\",0\n", FileOptions{},
			[]Example{ex("two\nlines", 0)}, []string{"0"}},
		{"csv index columns", "a.csv", "\"3\",\"t\",\"d\"\n\"1\",\"t2\",\"d2\"\n", FileOptions{TextCol: "2", LabelCol: "0"},
			[]Example{ex("d", 1), ex("d2", 0)}, []string{"1", "3"}},
		{"csv BOM and CRLF", "a.csv", "\ufefftext,label\r\nx,a\r\n", FileOptions{},
			[]Example{ex("x", 0)}, []string{"a"}},

		{"jsonl numbers and strings", "a.jsonl", `{"text": "good", "label": 1}` + "\n" + `{"label": 0, "text": "bad", "extra": [1,2]}` + "\n", FileOptions{},
			[]Example{ex("good", 1), ex("bad", 0)}, []string{"0", "1"}},
		{"jsonl float labels that are integers", "a.jsonl", `{"text": "a", "label": 1.0}` + "\n" + `{"text": "b", "label": "0"}` + "\n", FileOptions{},
			[]Example{ex("a", 1), ex("b", 0)}, []string{"0", "1"}},
		{"jsonl custom keys, escapes", "a.ndjson", `{"review": "line\nbreak \u00e9", "stars": "pos"}` + "\n\n", FileOptions{TextCol: "review", LabelCol: "stars"},
			[]Example{ex("line\nbreak é", 0)}, []string{"pos"}},
		{"empty file", "a.jsonl", "", FileOptions{}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, t.TempDir(), tc.file, tc.content)
			got, classes, rep, err := LoadFile(p, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				got = nil
			}
			if len(classes) == 0 {
				classes = nil
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(classes, tc.classes) {
				t.Errorf("got %+v %q, want %+v %q", got, classes, tc.want, tc.classes)
			}
			if rep.Count != 0 {
				t.Errorf("skipped %v", rep)
			}
		})
	}
}

func TestLoadFileBadLines(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+10)
	tests := []struct {
		name, file, content string
		opt                 FileOptions
		line                int
		msg                 string
		good                int // examples left with SkipBad
	}{
		{"tsv too many columns", "a.tsv", "text\tlabel\nok\t1\nx\t1\textra\n", FileOptions{}, 3, "3 columns, want 2", 1},
		{"tsv too few columns", "a.tsv", "text\tlabel\nno tab here\nok\t0\n", FileOptions{}, 2, "1 columns, want 2", 1},
		{"headerless count from first line", "a.tsv", "1\ta\n0\tb\tc\n", FileOptions{TextCol: "1", LabelCol: "0"}, 2, "3 columns, want 2", 1},
		{"empty text", "a.tsv", "text\tlabel\n  \t1\nok\t1\n", FileOptions{}, 2, "empty text", 1},
		{"empty label", "a.tsv", "text\tlabel\nx\t \nok\t1\n", FileOptions{}, 2, "empty label", 1},
		{"unknown label", "a.tsv", "text\tlabel\nx\tpos\ny\tmaybe\n", FileOptions{Classes: []string{"neg", "pos"}}, 3, `unknown label "maybe" (classes: neg, pos)`, 1},
		{"index out of range is unknown", "a.tsv", "text\tlabel\nx\t2\ny\t1\n", FileOptions{Classes: []string{"neg", "pos"}}, 2, `unknown label "2"`, 1},
		{"invalid UTF-8", "a.tsv", "text\tlabel\nbad \xff byte\t1\nok\t0\n", FileOptions{}, 2, "invalid UTF-8", 1},
		{"line over 1 MiB", "a.tsv", "text\tlabel\n" + long + "\t1\nok\t0\n", FileOptions{}, 2, "longer than", 1},
		{"csv wrong column count", "a.csv", "text,label\nx,1,2\ny,0\n", FileOptions{}, 2, "3 columns, want 2", 1},
		{"csv bare quote", "a.csv", "text,label\nx\"y,1\nok,0\n", FileOptions{}, 2, "bare \"", 1},
		{"csv invalid UTF-8", "a.csv", "text,label\n\"\xfe\",1\nok,0\n", FileOptions{}, 2, "invalid UTF-8", 1},
		{"csv record over 1 MiB", "a.csv", "text,label\n\"" + long + "\",1\nok,0\n", FileOptions{}, 2, "longer than", 1},
		{"jsonl invalid JSON", "a.jsonl", `{"text": "a", "label": 1}` + "\n{not json\n", FileOptions{}, 2, "invalid JSON", 1},
		{"jsonl not an object", "a.jsonl", `["a", 1]` + "\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, "invalid JSON object", 1},
		{"jsonl missing text", "a.jsonl", `{"label": 1}` + "\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, `missing key "text"`, 1},
		{"jsonl missing label", "a.jsonl", `{"text": "a", "label": 1}` + "\n" + `{"text": "a"}` + "\n", FileOptions{}, 2, `missing key "label"`, 1},
		{"jsonl text not a string", "a.jsonl", `{"text": 5, "label": 1}` + "\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, `want a string`, 1},
		{"jsonl bool label", "a.jsonl", `{"text": "a", "label": true}` + "\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, `want a string or a number`, 1},
		{"jsonl null label", "a.jsonl", `{"text": "a", "label": null}` + "\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, `want a string or a number`, 1},
		{"jsonl invalid UTF-8", "a.jsonl", "{\"text\": \"\xff\", \"label\": 1}\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, "invalid UTF-8", 1},
		{"jsonl line over 1 MiB", "a.jsonl", `{"text": "` + long + `", "label": 1}` + "\n" + `{"text": "a", "label": 1}` + "\n", FileOptions{}, 1, "longer than", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, t.TempDir(), tc.file, tc.content)
			_, _, _, err := LoadFile(p, tc.opt)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v, want a *LineError", err)
			}
			if le.Path != p || le.Line != tc.line || !strings.Contains(le.Msg, tc.msg) {
				t.Errorf("error %q, want line %d and %q", err, tc.line, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), p+":") {
				t.Errorf("error %q does not start with path:line", err)
			}
			opt := tc.opt
			opt.SkipBad = true
			got, _, rep, err := LoadFile(p, opt)
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			if len(got) != tc.good || rep.Count != 1 || len(rep.Examples) != 1 || !strings.Contains(rep.Examples[0], tc.msg) {
				t.Errorf("SkipBad: %d examples, report %+v", len(got), rep)
			}
		})
	}
}

func TestLoadFileSkipReport(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("text\tlabel\n")
	for i := 0; i < 12; i++ {
		sb.WriteString("bad line\n")
		sb.WriteString("good\t1\n")
	}
	p := writeTemp(t, t.TempDir(), "a.tsv", sb.String())
	got, _, rep, err := LoadFile(p, FileOptions{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 12 || rep.Count != 12 || len(rep.Examples) != maxSkipExamples {
		t.Fatalf("%d examples, report %+v", len(got), rep)
	}
	if rep.Examples[1] != p+":4: 1 columns, want 2" {
		t.Errorf("example %q", rep.Examples[1])
	}
	if s := rep.String(); !strings.HasPrefix(s, "12 line(s) skipped") {
		t.Errorf("String() = %q", s)
	}
	if s := (SkipReport{}).String(); s != "no lines skipped" {
		t.Errorf("String() = %q", s)
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, content string
		opt                 FileOptions
		want                string
	}{
		{"unknown extension", "a.txt", "x", FileOptions{}, "cannot tell the format"},
		{"unknown format", "a.tsv", "x", FileOptions{Format: "xml"}, `unknown format "xml"`},
		{"column not in header", "a.tsv", "sentence\tlabel\nx\t1\n", FileOptions{}, `:1: no column "text" in the header (columns: sentence, label)`},
		{"csv column not in header", "a.csv", "sentence,label\nx,1\n", FileOptions{}, `no column "text"`},
		{"index beyond columns", "a.tsv", "a\tb\n", FileOptions{TextCol: "5", LabelCol: "0"}, "column 5 requested"},
		{"negative index", "a.tsv", "a\tb\n", FileOptions{TextCol: "-1", LabelCol: "0"}, "negative column index"},
		{"empty classes", "a.tsv", "text\tlabel\n", FileOptions{Classes: []string{}}, "Classes is empty"},
		{"duplicate classes", "a.tsv", "text\tlabel\n", FileOptions{Classes: []string{"a", "a"}}, `class "a" listed twice`},
		{"not gzip", "a.tsv.gz", "", FileOptions{}, "gzip"},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, tc.name+"-"+tc.file)
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := LoadFile(p, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		// Structural problems are not skippable.
		tc.opt.SkipBad = true
		if _, _, _, err := LoadFile(p, tc.opt); err == nil {
			t.Errorf("%s: SkipBad hid the error", tc.name)
		}
	}
	missing := filepath.Join(dir, "nope.tsv")
	if _, _, _, err := LoadFile(missing, FileOptions{}); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing file: %v", err)
	}
}

func TestLoadSplits(t *testing.T) {
	dir := t.TempDir()
	train := writeTemp(t, dir, "my-data.train.tsv", "text\tlabel\na\tpos\nb\tneg\nbad\n")
	dev := writeTemp(t, dir, "dev.tsv", "text\tlabel\nc\tneg\n")
	test := writeTemp(t, dir, "test.tsv", "text\tlabel\nd\tpos\ne\tneg\n")
	ds, err := LoadSplits(train, dev, test, FileOptions{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ds.Classes, []string{"neg", "pos"}) ||
		!reflect.DeepEqual(ds.Train, []Example{ex("a", 1), ex("b", 0)}) ||
		!reflect.DeepEqual(ds.Dev, []Example{ex("c", 0)}) ||
		!reflect.DeepEqual(ds.Test, []Example{ex("d", 1), ex("e", 0)}) {
		t.Errorf("dataset %+v", ds)
	}
	if ds.Name != "my-data.train" || len(ds.Notes) != 3 || !strings.Contains(ds.Notes[0], "1 line(s) skipped") {
		t.Errorf("name %q notes %q", ds.Name, ds.Notes)
	}

	// A label the train file does not have: error naming file and line, even
	// with SkipBad.
	clean := writeTemp(t, dir, "clean.tsv", "text\tlabel\na\tpos\nb\tneg\n")
	dev2 := writeTemp(t, dir, "dev2.tsv", "text\tlabel\nc\tneg\nd\tneutral\n")
	for _, skip := range []bool{false, true} {
		_, err := LoadSplits(clean, dev2, "", FileOptions{SkipBad: skip})
		if err == nil || !strings.Contains(err.Error(), dev2+":3: unknown label \"neutral\"") {
			t.Errorf("SkipBad=%v: error %v", skip, err)
		}
	}
	// Numeric train classes: a dev label outside them is not read as an index.
	trainNum := writeTemp(t, dir, "num.tsv", "text\tlabel\na\t1\nb\t2\n")
	devNum := writeTemp(t, dir, "devnum.tsv", "text\tlabel\nc\t0\n")
	if _, err := LoadSplits(trainNum, devNum, "", FileOptions{}); err == nil || !strings.Contains(err.Error(), `unknown label "0"`) {
		t.Errorf("numeric: %v", err)
	}
	// Fixed classes apply to every split; dev and test may be absent.
	ds, err = LoadSplits(trainNum, "", "", FileOptions{Classes: []string{"x", "1", "2"}})
	if err != nil || !reflect.DeepEqual(ds.Train, []Example{ex("a", 1), ex("b", 2)}) || ds.Dev != nil || ds.Test != nil {
		t.Errorf("fixed classes: %+v %v", ds, err)
	}
	if _, err := LoadSplits("", dev, test, FileOptions{}); err == nil {
		t.Error("no train file: no error")
	}
	if _, err := LoadSplits(clean, filepath.Join(dir, "missing.tsv"), "", FileOptions{}); err == nil || !strings.Contains(err.Error(), "missing.tsv") {
		t.Errorf("missing dev: %v", err)
	}
}

// TestLoadSplitsRefusesEmptyDevOrTest: a dev or test file without examples
// is an error naming it (it selected on, or reported, accuracy 0).
func TestLoadSplitsRefusesEmptyDevOrTest(t *testing.T) {
	dir := t.TempDir()
	train, empty := filepath.Join(dir, "train.csv"), filepath.Join(dir, "empty.csv")
	os.WriteFile(train, []byte("text,label\ngood film,1\nbad film,0\n"), 0o644)
	os.WriteFile(empty, []byte("text,label\n"), 0o644)
	for _, c := range [][2]string{{empty, ""}, {"", empty}} {
		_, err := LoadSplits(train, c[0], c[1], FileOptions{})
		if err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), "no examples") {
			t.Errorf("dev %q test %q: %v", c[0], c[1], err)
		}
	}
}

// TestUnknownExtensionNamesTheFlag: the error says which flag to give.
func TestUnknownExtensionNamesTheFlag(t *testing.T) {
	p := filepath.Join(t.TempDir(), "data.txt")
	os.WriteFile(p, []byte("x,1\n"), 0o644)
	if _, _, _, err := LoadFile(p, FileOptions{}); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("unknown extension: %v", err)
	}
}
