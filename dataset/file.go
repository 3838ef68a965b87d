package dataset

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FileOptions says how to read a generic labelled file.
type FileOptions struct {
	// Format is "csv", "tsv" or "jsonl". Empty: from the extension (.csv;
	// .tsv or .tab; .jsonl or .ndjson), after a trailing ".gz", which is
	// gunzipped.
	Format string
	// TextCol and LabelCol select the text and the label (defaults "text"
	// and "label"). For JSONL they are object keys. For CSV/TSV they are
	// either column names, looked up in the header row, or 0-based column
	// indices written as numbers ("0", "2").
	TextCol, LabelCol string
	// Header says that a CSV/TSV file whose columns are given by index still
	// has a header row to skip. A column given by name implies a header, so
	// with the default column names the first row is always the header.
	Header bool
	// SkipBad skips malformed lines, counting them in the SkipReport, instead
	// of failing on the first one.
	SkipBad bool
	// Classes fixes the label set: a label equal to Classes[i] is class i. A
	// label not in Classes is a malformed line. When no class name is an
	// integer, an integer label k in [0, len(Classes)) also means class k
	// (so Classes {"neg", "pos"} reads 0/1 files).
	Classes []string
}

// SkipReport counts the lines skipped with FileOptions.SkipBad.
type SkipReport struct {
	Count    int
	Examples []string // the first few reasons, "path:line: what is wrong"
}

const maxSkipExamples = 5

func (r *SkipReport) add(e *LineError) {
	r.Count++
	if len(r.Examples) < maxSkipExamples {
		r.Examples = append(r.Examples, e.Error())
	}
}

// String summarises the report in one line.
func (r SkipReport) String() string {
	if r.Count == 0 {
		return "no lines skipped"
	}
	return fmt.Sprintf("%d line(s) skipped, e.g. %s", r.Count, strings.Join(r.Examples, "; "))
}

// labelPolicy is how raw labels become class indices.
type labelPolicy struct {
	classes       []string // fixed label set; nil = infer
	indexFallback bool     // an integer k in range means class k
	strict        bool     // an unknown label is fatal even with SkipBad
}

type rawExample struct {
	line  int
	text  string
	label string
}

// LoadFile reads labelled examples from a CSV, TSV or JSONL file.
//
// It returns the examples, the class names (Example.Label indexes them) and
// what was skipped. Without FileOptions.Classes the classes are inferred:
// when the distinct labels are exactly the integers 0..K-1 they are kept as
// they are (classes "0".."K-1"); otherwise the distinct labels are sorted
// (numerically when all are integers) and numbered in that order.
//
// A line is malformed when it has the wrong number of columns (the header's,
// or the first line's), is not a JSON object, lacks a key, has an empty text
// or label, an unknown label (with Classes), invalid UTF-8, or more than
// MaxLineBytes. Blank lines are ignored. Errors read "path:line: what is
// wrong" (*LineError); with SkipBad such lines are counted instead.
func LoadFile(path string, opt FileOptions) ([]Example, []string, SkipReport, error) {
	pol := labelPolicy{classes: opt.Classes, indexFallback: opt.Classes != nil && !anyInteger(opt.Classes)}
	return loadFile(path, opt, pol)
}

func loadFile(path string, opt FileOptions, pol labelPolicy) ([]Example, []string, SkipReport, error) {
	var rep SkipReport
	format, err := fileFormat(path, opt.Format)
	if err != nil {
		return nil, nil, rep, err
	}
	textCol, labelCol := opt.TextCol, opt.LabelCol
	if textCol == "" {
		textCol = "text"
	}
	if labelCol == "" {
		labelCol = "label"
	}
	var classIndex map[string]int
	if pol.classes != nil {
		if len(pol.classes) == 0 {
			return nil, nil, rep, fmt.Errorf("dataset: %s: FileOptions.Classes is empty", path)
		}
		classIndex = make(map[string]int, len(pol.classes))
		for i, c := range pol.classes {
			if _, dup := classIndex[c]; dup {
				return nil, nil, rep, fmt.Errorf("dataset: %s: class %q listed twice", path, c)
			}
			classIndex[c] = i
		}
	}
	var out []Example
	var raws []rawExample
	// bad handles a malformed line: fatal, or counted.
	bad := func(line int, format string, args ...any) error {
		e := &LineError{path, line, fmt.Sprintf(format, args...)}
		if !opt.SkipBad {
			return e
		}
		rep.add(e)
		return nil
	}
	add := func(line int, txt, label string) error {
		if strings.TrimSpace(txt) == "" {
			return bad(line, "empty text")
		}
		label = canonicalLabel(strings.TrimSpace(label))
		if label == "" {
			return bad(line, "empty label")
		}
		if classIndex == nil {
			raws = append(raws, rawExample{line, txt, label})
			return nil
		}
		c, ok := classIndex[label]
		if !ok && pol.indexFallback {
			if k, err := strconv.Atoi(label); err == nil && k >= 0 && k < len(pol.classes) {
				c, ok = k, true
			}
		}
		if !ok {
			msg := fmt.Sprintf("unknown label %q (classes: %s)", label, strings.Join(pol.classes, ", "))
			if pol.strict {
				return &LineError{path, line, msg}
			}
			return bad(line, "%s", msg)
		}
		out = append(out, Example{Text: txt, Label: c})
		return nil
	}
	switch format {
	case "tsv":
		err = readTSV(path, opt, textCol, labelCol, bad, add)
	case "csv":
		err = readCSV(path, opt, textCol, labelCol, bad, add)
	case "jsonl":
		err = readJSONL(path, textCol, labelCol, bad, add)
	}
	if err != nil {
		return nil, nil, rep, err
	}
	if classIndex != nil {
		return out, append([]string(nil), pol.classes...), rep, nil
	}
	classes, index := inferClasses(raws)
	out = make([]Example, len(raws))
	for i, r := range raws {
		out[i] = Example{Text: r.text, Label: index[r.label]}
	}
	return out, classes, rep, nil
}

func fileFormat(path, format string) (string, error) {
	if format != "" {
		switch f := strings.ToLower(format); f {
		case "csv", "tsv", "jsonl":
			return f, nil
		}
		return "", fmt.Errorf("dataset: unknown format %q (valid: csv, tsv, jsonl)", format)
	}
	name := strings.TrimSuffix(strings.ToLower(path), ".gz")
	switch filepath.Ext(name) {
	case ".csv":
		return "csv", nil
	case ".tsv", ".tab":
		return "tsv", nil
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	}
	return "", fmt.Errorf("dataset: %s: cannot tell the format from the extension; give --format csv, tsv or jsonl (FileOptions.Format in Go)", path)
}

// columns resolves the text and label columns. header is the header row, or
// nil when the columns are indices.
func columns(path string, header []string, textCol, labelCol string) (ti, li int, err error) {
	find := func(col string) (int, error) {
		if k, err := strconv.Atoi(col); err == nil {
			if k < 0 {
				return 0, fmt.Errorf("dataset: %s: negative column index %d", path, k)
			}
			return k, nil
		}
		for i, h := range header {
			if strings.TrimSpace(h) == col {
				return i, nil
			}
		}
		for i, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), col) {
				return i, nil
			}
		}
		return 0, fmt.Errorf("dataset: %s:1: no column %q in the header (columns: %s)", path, col, strings.Join(header, ", "))
	}
	if ti, err = find(textCol); err != nil {
		return
	}
	li, err = find(labelCol)
	return
}

func isIndex(col string) bool {
	_, err := strconv.Atoi(col)
	return err == nil
}

func hasHeader(opt FileOptions, textCol, labelCol string) bool {
	return opt.Header || !isIndex(textCol) || !isIndex(labelCol)
}

type badFunc func(line int, format string, args ...any) error
type addFunc func(line int, text, label string) error

func readTSV(path string, opt FileOptions, textCol, labelCol string, bad badFunc, add addFunc) error {
	wantHeader := hasHeader(opt, textCol, labelCol)
	ncols := -1 // expected number of columns, from the header or the first line
	ti, li := -1, -1
	if !wantHeader {
		var err error
		if ti, li, err = columns(path, nil, textCol, labelCol); err != nil {
			return err
		}
	}
	return eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return bad(line, "line longer than %d bytes", MaxLineBytes)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		if !utf8.Valid(b) {
			return bad(line, "invalid UTF-8")
		}
		fields := strings.Split(string(b), "\t")
		if ti < 0 { // header row
			var err error
			if ti, li, err = columns(path, fields, textCol, labelCol); err != nil {
				return err
			}
			ncols = len(fields)
			if m := max(ti, li); m >= ncols {
				return fmt.Errorf("dataset: %s:%d: column %d requested, but the header has %d columns", path, line, m, ncols)
			}
			return nil
		}
		if ncols < 0 {
			ncols = len(fields)
			if m := max(ti, li); m >= ncols {
				return fmt.Errorf("dataset: %s:%d: column %d requested, but the line has %d columns", path, line, m, ncols)
			}
		}
		if len(fields) != ncols {
			return bad(line, "%d columns, want %d", len(fields), ncols)
		}
		return add(line, fields[ti], fields[li])
	})
}

func readCSV(path string, opt FileOptions, textCol, labelCol string, bad badFunc, add addFunc) error {
	rc, err := openData(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	wantHeader := hasHeader(opt, textCol, labelCol)
	ti, li, ncols := -1, -1, -1
	if !wantHeader {
		if ti, li, err = columns(path, nil, textCol, labelCol); err != nil {
			return err
		}
	}
	r := csv.NewReader(newBOMSkipper(rc))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	for {
		before := r.InputOffset()
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("dataset: %s: %w", path, err)
			}
			if e := bad(pe.StartLine, "%v", pe.Err); e != nil {
				return e
			}
			if r.InputOffset() == before {
				return &LineError{path, pe.StartLine, "CSV reader made no progress"}
			}
			continue
		}
		line, _ := r.FieldPos(0)
		size := 0
		valid := true
		for _, f := range rec {
			size += len(f) + 1
			valid = valid && utf8.ValidString(f)
		}
		if ti < 0 { // header row
			if ti, li, err = columns(path, rec, textCol, labelCol); err != nil {
				return err
			}
			ncols = len(rec)
			if m := max(ti, li); m >= ncols {
				return fmt.Errorf("dataset: %s:%d: column %d requested, but the header has %d columns", path, line, m, ncols)
			}
			continue
		}
		if size > MaxLineBytes {
			if e := bad(line, "record longer than %d bytes", MaxLineBytes); e != nil {
				return e
			}
			continue
		}
		if !valid {
			if e := bad(line, "invalid UTF-8"); e != nil {
				return e
			}
			continue
		}
		if ncols < 0 {
			ncols = len(rec)
			if m := max(ti, li); m >= ncols {
				return fmt.Errorf("dataset: %s:%d: column %d requested, but the record has %d columns", path, line, m, ncols)
			}
		}
		if len(rec) != ncols {
			if e := bad(line, "%d columns, want %d", len(rec), ncols); e != nil {
				return e
			}
			continue
		}
		if err := add(line, rec[ti], rec[li]); err != nil {
			return err
		}
	}
}

// bomSkipper drops a leading UTF-8 byte order mark.
type bomSkipper struct {
	r     io.Reader
	first bool
}

func newBOMSkipper(r io.Reader) io.Reader { return &bomSkipper{r: r, first: true} }

func (b *bomSkipper) Read(p []byte) (int, error) {
	if !b.first {
		return b.r.Read(p)
	}
	b.first = false
	var head [3]byte
	n, err := io.ReadFull(b.r, head[:])
	if n == 3 && string(head[:]) == "\ufeff" {
		return b.r.Read(p)
	}
	b.r = io.MultiReader(bytes.NewReader(head[:n]), b.r)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return 0, err
	}
	return b.r.Read(p)
}

func readJSONL(path, textKey, labelKey string, bad badFunc, add addFunc) error {
	return eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return bad(line, "line longer than %d bytes", MaxLineBytes)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		// encoding/json would silently replace invalid UTF-8.
		if !utf8.Valid(b) {
			return bad(line, "invalid UTF-8")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return bad(line, "invalid JSON object: %v", err)
		}
		rawText, ok := obj[textKey]
		if !ok {
			return bad(line, "missing key %q", textKey)
		}
		rawLabel, ok := obj[labelKey]
		if !ok {
			return bad(line, "missing key %q", labelKey)
		}
		var txt string
		if err := json.Unmarshal(rawText, &txt); err != nil {
			return bad(line, "key %q: want a string, got %s", textKey, abbrev(rawText))
		}
		label, err := jsonLabel(rawLabel)
		if err != nil {
			return bad(line, "key %q: %v", labelKey, err)
		}
		return add(line, txt, label)
	})
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// jsonLabel accepts a JSON string or number.
func jsonLabel(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	n, ok := v.(json.Number)
	if !ok {
		return "", fmt.Errorf("want a string or a number, got %s", abbrev(raw))
	}
	return n.String(), nil
}

// canonicalLabel writes integer-valued labels one way ("01", "1.0", "1e0"
// are all "1"), so that class matching does not depend on formatting.
func canonicalLabel(s string) string {
	if k, err := strconv.Atoi(s); err == nil {
		return strconv.Itoa(k)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return s
}

func anyInteger(classes []string) bool {
	for _, c := range classes {
		if _, err := strconv.Atoi(strings.TrimSpace(c)); err == nil {
			return true
		}
	}
	return false
}

// inferClasses numbers the distinct labels (see LoadFile).
func inferClasses(raws []rawExample) ([]string, map[string]int) {
	seen := map[string]bool{}
	var labels []string
	for _, r := range raws {
		if !seen[r.label] {
			seen[r.label] = true
			labels = append(labels, r.label)
		}
	}
	ints := make(map[string]int, len(labels))
	allInt := true
	for _, l := range labels {
		k, err := strconv.Atoi(l)
		if err != nil {
			allInt = false
			break
		}
		ints[l] = k
	}
	if allInt {
		sort.Slice(labels, func(i, j int) bool { return ints[labels[i]] < ints[labels[j]] })
	} else {
		sort.Strings(labels)
	}
	index := make(map[string]int, len(labels))
	for i, l := range labels {
		index[l] = i
	}
	// Labels 0..K-1 keep their value; this is the same numbering, since
	// sorted 0..K-1 are at positions 0..K-1.
	return labels, index
}

// LoadSplits reads train, dev and test files ("" = no such split) with the
// same options and one class list: the train file's (or opt.Classes). A dev or
// test label that the train file does not have is an error naming the file
// and line, even with SkipBad, because such a split cannot be evaluated
// consistently. Dataset.Name is the train file's base name without
// extensions; skipped lines are summarised in Dataset.Notes.
func LoadSplits(train, dev, test string, opt FileOptions) (*Dataset, error) {
	if train == "" {
		return nil, fmt.Errorf("dataset: LoadSplits needs a train file")
	}
	ds := &Dataset{Name: baseName(train)}
	tr, classes, rep, err := LoadFile(train, opt)
	if err != nil {
		return nil, err
	}
	ds.Train, ds.Classes = tr, classes
	ds.Notes = append(ds.Notes, fmt.Sprintf("train: %s (%d examples; %s)", train, len(tr), rep))
	pol := labelPolicy{classes: classes, strict: true}
	if opt.Classes != nil {
		pol.indexFallback = !anyInteger(classes)
	}
	for _, s := range []struct {
		name, path string
		dst        *[]Example
	}{{"dev", dev, &ds.Dev}, {"test", test, &ds.Test}} {
		if s.path == "" {
			continue
		}
		ex, _, rep, err := loadFile(s.path, opt, pol)
		if err != nil {
			return nil, err
		}
		if len(ex) == 0 {
			// An empty dev set would select on accuracy 0 and an empty test
			// set report it, both with exit 0.
			return nil, fmt.Errorf("dataset: %s file %s has no examples (%s)", s.name, s.path, rep)
		}
		*s.dst = ex
		ds.Notes = append(ds.Notes, fmt.Sprintf("%s: %s (%d examples; %s)", s.name, s.path, len(ex), rep))
	}
	return ds, nil
}

func baseName(path string) string {
	b := filepath.Base(path)
	b = strings.TrimSuffix(b, ".gz")
	return strings.TrimSuffix(b, filepath.Ext(b))
}
