package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzFormats are the file names FuzzLoadFile writes its input to: the
// extension picks the format (a ".gz" one is gzipped first).
var fuzzFormats = []string{"in.csv", "in.tsv", "in.jsonl", "in.tsv.gz", "in.csv.gz", "in.ndjson.gz"}

// fuzzFileOptions derives the options from a byte: bit 0 SkipBad, bit 1
// index columns (text 1, label 0), bit 2 Header, bit 3 fixed classes (bit
// 4, an explicit Format, is FuzzLoadFile's).
func fuzzFileOptions(opts uint8) FileOptions {
	var o FileOptions
	o.SkipBad = opts&1 != 0
	if opts&2 != 0 {
		o.TextCol, o.LabelCol = "1", "0"
	}
	o.Header = opts&4 != 0
	if opts&8 != 0 {
		o.Classes = []string{"neg", "pos", "7"}
	}
	return o
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFuzzFile writes data to dir/name, gzipped when name ends in ".gz".
func writeFuzzFile(t *testing.T, dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	if strings.HasSuffix(name, ".gz") {
		data = gzipBytes(t, data)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkFuzzErr is the property every reader shares: an error has a
// message.
func checkFuzzErr(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.TrimSpace(err.Error()) == "" {
		t.Fatalf("error with an empty message: %#v", err)
	}
}

// FuzzLoadFile: LoadFile returns examples or an error, never panics;
// accepted examples have a non-blank valid UTF-8 text and a label indexing
// distinct classes, and survive a write as JSONL and a re-read unchanged.
func FuzzLoadFile(f *testing.F) {
	seeds := []struct {
		data   string
		format uint8
		opts   uint8
	}{
		{"text,label\n\"hello, \"\"world\"\"\",1\nplain,0\n", 0, 0},
		{"label,text\n\"two\nlines\",0\n\"unterminated,1\n", 0, 1},
		{"\ufefftext,label\r\nx,pos\r\ny,neg\r\n", 0, 8},
		{"\"3\",\"t\",\"d\"\n\"1\",\"t2\",\"d2\"\n", 0, 2},
		{"a,b\n\"x\"y,1\n", 0, 1},
		{"text\tlabel\ngood film\t1\nbad\t0\n\n", 1, 0},
		{"1\tgood\n0\tbad\n0\n", 1, 3},
		{"label\ttext\n1\tgood\n2\t \n", 1, 6},
		{"text\tlabel\na\t01\nb\t1.0\nc\t1e0\nd\tpos\n", 1, 9},
		{"text\tlabel\n\xff\t0\n", 1, 1},
		{`{"text": "good", "label": 1}` + "\n" + `{"label": 0, "text": "bad", "extra": [1,2]}` + "\n", 2, 0},
		{`{"text": "a", "label": 1.0}` + "\n" + `{"text": "b", "label": "0"}` + "\n" + `{"text": 3, "label": null}` + "\n", 2, 1},
		{`{"text": "line\nbreak \u00e9", "label": "pos"}` + "\n[1]\n{\n", 2, 9},
		{"text\tlabel\nx\t0\n", 3, 0},
		{"text,label\nx,0\n", 4, 0},
		{`{"text": "x", "label": 2}`, 5, 8},
		{"text\tlabel\nx\t0\n", 1, 16},
		{`{"text": "x", "label": 2}`, 5, 16 + 8},
		{"", 0, 0},
	}
	for _, s := range seeds {
		f.Add([]byte(s.data), s.format, s.opts)
	}
	f.Fuzz(func(t *testing.T, data []byte, format, opts uint8) {
		dir := t.TempDir()
		name := fuzzFormats[int(format)%len(fuzzFormats)]
		opt := fuzzFileOptions(opts)
		if opts&16 != 0 { // the format given, not told by the extension
			base, gz := strings.CutSuffix(name, ".gz")
			opt.Format = strings.ToUpper(strings.TrimPrefix(filepath.Ext(base), "."))
			if opt.Format == "NDJSON" {
				opt.Format = "jsonl"
			}
			name = "in.data"
			if gz {
				name += ".gz"
			}
		}
		ex, classes, rep, err := LoadFile(writeFuzzFile(t, dir, name, data), opt)
		checkFuzzErr(t, err)
		if err != nil {
			return
		}
		if rep.Count < len(rep.Examples) || (rep.Count > 0 && !opt.SkipBad) {
			t.Fatalf("skip report %+v with SkipBad %v", rep, opt.SkipBad)
		}
		seen := map[string]bool{}
		for _, c := range classes {
			if seen[c] {
				t.Fatalf("class %q listed twice in %q", c, classes)
			}
			seen[c] = true
		}
		for i, e := range ex {
			if strings.TrimSpace(e.Text) == "" || !utf8.ValidString(e.Text) {
				t.Fatalf("example %d: text %q", i, e.Text)
			}
			if e.Label < 0 || e.Label >= len(classes) {
				t.Fatalf("example %d: label %d, %d classes", i, e.Label, len(classes))
			}
		}
		if len(ex) == 0 {
			return
		}
		// Round trip: the examples written as JSONL with their class names
		// read back as they are.
		var buf bytes.Buffer
		for _, e := range ex {
			line, err := json.Marshal(map[string]string{"text": e.Text, "label": classes[e.Label]})
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
		back := FileOptions{Classes: opt.Classes}
		ex2, classes2, _, err := LoadFile(writeFuzzFile(t, dir, "back.jsonl", buf.Bytes()), back)
		if err != nil {
			t.Fatalf("re-reading the accepted examples: %v", err)
		}
		if opt.Classes == nil {
			// Only the classes that occur come back.
			used := map[int]bool{}
			for _, e := range ex {
				used[e.Label] = true
			}
			if len(used) != len(classes) {
				t.Fatalf("inferred classes %q, but only %d are used", classes, len(used))
			}
		}
		if !reflect.DeepEqual(ex2, ex) || !reflect.DeepEqual(classes2, classes) {
			t.Fatalf("round trip changed the data:\n got %q %+v\nwant %q %+v", classes2, ex2, classes, ex)
		}
	})
}

// FuzzReadSTS: the STS Benchmark, SICK and SemEval STS readers return
// pairs or an error, never panic; accepted pairs have non-blank valid UTF-8
// sentences and a score in the format's range.
func FuzzReadSTS(f *testing.F) {
	stsb := "main-captions\tMSRvid\t2012test\t0001\t5.000\tA plane is taking off.\tAn air plane is taking off.\n" +
		"main-news\theadlines\t2013\t0042\t0\tHe said \"no.\tShe said \"yes\".\tsrc-a\tsrc-b\n\n" +
		"main-forums\tdeft-forum\t2014\t0007\t2.4\tx\ty\r\n"
	sick := sickHeader + "\n1\tA dog runs\tA dog is running\t4.5\tENTAILMENT\n2\tx\ty\t1\tNEUTRAL\r\n"
	f.Add([]byte(stsb), []byte(nil), uint8(0))
	f.Add([]byte("g\tf\ty\t1\tNaN\ta\tb\n"), []byte(nil), uint8(0))
	f.Add([]byte("g\tf\ty\t1\t5.1\ta\tb\n"), []byte(nil), uint8(0))
	f.Add([]byte(sick), []byte(nil), uint8(1))
	f.Add([]byte(sickHeader+"\n1\t\xff\ty\t3\tNEUTRAL\n"), []byte(nil), uint8(1))
	f.Add([]byte("a b\tc d\n\te\nf\tg\n"), []byte("4.2\n\n0\n"), uint8(2))
	f.Add([]byte("a\tb\ts1\ts2\n"), []byte("5\n"), uint8(3))
	f.Add([]byte("a\tb\n"), []byte("1\n2\n"), uint8(2))
	f.Add([]byte("a\t\n"), []byte("inf\n"), uint8(2))
	f.Fuzz(func(t *testing.T, input, gs []byte, which uint8) {
		dir := t.TempDir()
		var pairs []SimPair
		var err error
		lo, hi := 0.0, 5.0
		switch which % 4 {
		case 0:
			if err := os.MkdirAll(filepath.Join(dir, "stsb"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFuzzFile(t, dir, "stsb/sts-dev.csv", input)
			pairs, err = LoadSTSB(dir, "dev")
		case 1:
			if err := os.MkdirAll(filepath.Join(dir, "sick"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFuzzFile(t, dir, "sick/SICK_trial.txt", input)
			pairs, err = LoadSICKR(dir, "dev")
			lo = 1
		default:
			in := writeFuzzFile(t, dir, "STS.input.x.txt", input)
			g := writeFuzzFile(t, dir, "STS.gs.x.txt", gs)
			pairs, err = readSTSSet(in, g, 2+2*int(which%4-2))
		}
		checkFuzzErr(t, err)
		if err != nil {
			return
		}
		if len(pairs) == 0 {
			t.Fatal("no pairs and no error")
		}
		for i, p := range pairs {
			for _, s := range []string{p.A, p.B} {
				if strings.TrimSpace(s) == "" || !utf8.ValidString(s) {
					t.Fatalf("pair %d: sentence %q", i, s)
				}
			}
			if !(p.Score >= lo && p.Score <= hi) || math.IsNaN(p.Score) {
				t.Fatalf("pair %d: score %v outside [%g, %g]", i, p.Score, lo, hi)
			}
		}
	})
}

// TestLoadFileHeaderNarrowerThanIndex is FuzzLoadFile's first crasher: with
// index columns and Header, a one-column header row set the column count,
// and the next one-column row was indexed at column 1 (a panic, in TSV and
// CSV alike). Now the header row itself is the error.
func TestLoadFileHeaderNarrowerThanIndex(t *testing.T) {
	dir := t.TempDir()
	opt := FileOptions{TextCol: "1", LabelCol: "0", Header: true, Classes: []string{"neg", "pos", "7"}}
	for _, name := range []string{"in.csv.gz", "in.tsv", "in.csv"} {
		p := writeFuzzFile(t, dir, name, []byte("0\n0"))
		_, _, _, err := LoadFile(p, opt)
		if want := p + ":1: column 1 requested, but the header has 1 columns"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
}
