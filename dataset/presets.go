package dataset

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// Preset is a standard benchmark configuration: which files make the splits
// (see Load) and the preprocessing the papers use for it.
type Preset struct {
	Name      string
	Tokenizer string // text.NewTokenizer name
	// MaxLen is the mini-batch length in tokens (truncation). Callers may
	// change it on their copy (e.g. a longer IMDB limit).
	MaxLen int
	// MinCount keeps training words with count >= MinCount
	// (text.BuildVocab): a paper's "frequency > t" is t+1.
	MinCount int
	// MaxVocab caps the number of real words; 0 = no cap.
	MaxVocab    int
	Description string
}

var negPos = []string{"negative", "positive"}

// trecClasses is Kim (2014)'s numbering of the TREC coarse labels.
var trecClasses = []string{"DESC", "ENTY", "ABBR", "HUM", "LOC", "NUM"}

var agClasses = []string{"World", "Sports", "Business", "Sci/Tech"}

type presetDef struct {
	Preset
	load func(dir string) (*Dataset, error)
}

var presetDefs = []presetDef{
	{Preset{"sst2", "flat", 50, 1, 0,
		"SST-2 as in FLAT: train on the 67,349 GLUE phrases (sst2-glue/train.tsv), dev = GLUE dev (872), test = stsa.binary.test (1,821 sentences); FLAT Table 6: threshold 0, length 50"},
		loadSST2},
	{Preset{"sst2-sent", "flat", 50, 1, 0,
		"SST-2 sentence level (Kim 2014 stsa.binary): 6,920 / 872 / 1,821 (FLAT Table 1)"},
		loadSST2Sent},
	{Preset{"imdb", "flat", 250, 6, 0,
		"IMDB (Maas et al. 2011): train/dev = Jia et al. (2019) 20,000 / 5,000 split of the 25,000 train reviews, test = all 25,000 test reviews; FLAT Table 6: threshold 5, length 250"},
		loadIMDB},
	{Preset{"mr", "flat", 50, 1, 0,
		"MR movie-review polarity (Pang & Lee 2005), 10,662 sentences, no official split: seeded stratified 90/10 train/test, dev = 10% of train (seed 1)"},
		loadMR},
	{Preset{"trec", "flat", 15, 1, 0,
		"TREC-6 question classification (Li & Roth 2002), classes in Kim's order; dev = seeded stratified 452 of the 5,452 train questions, test 500; FLAT Table 6: threshold 0, length 15"},
		loadTREC},
	{Preset{"agnews", "flat", 50, 6, 0,
		"AG News (Zhang et al. 2015), test.csv only (7,600; the 120k train set is not available): seeded stratified 80/10/10 train/dev/test, a documented deviation; FLAT Table 6: threshold 5, length 50"},
		loadAGNews},
	{Preset{"mrpc", "flat", 128, 1, 0,
		"MRPC paraphrase sentence pairs (Dolan & Brockett 2005): train 4,076 / test 1,725 as given, dev = seeded stratified 408 of train (GLUE's size); transformers only"},
		loadMRPC},
	{Preset{"snli", "flat", 128, 1, 0,
		"SNLI entailment sentence pairs (Bowman et al. 2015), dev and test files only: train/dev = seeded 90/10 split of SNLI dev by premise (a documented deviation), test = SNLI test; transformers only"},
		loadSNLI},
}

// Presets returns the preset configurations, in a fixed order.
func Presets() []Preset {
	out := make([]Preset, len(presetDefs))
	for i, d := range presetDefs {
		out[i] = d.Preset
	}
	return out
}

func presetNames() string {
	names := make([]string, len(presetDefs))
	for i, d := range presetDefs {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, error) {
	for _, d := range presetDefs {
		if d.Name == name {
			return d.Preset, nil
		}
	}
	return Preset{}, fmt.Errorf("dataset: unknown preset %q (valid: %s)", name, presetNames())
}

// Load loads the preset called name from dir, a folder laid out like the
// project's shared/data (sst2-glue/, sst2-stsa/, imdb/, ...). Splits and
// recipes are described in Preset.Description and in Dataset.Notes.
func Load(name, dir string) (*Dataset, error) {
	for _, d := range presetDefs {
		if d.Name == name {
			if dir == "" {
				return nil, fmt.Errorf("dataset %s: no data folder given", name)
			}
			ds, err := d.load(dir)
			if err != nil {
				return nil, err
			}
			ds.Name = name
			return ds, nil
		}
	}
	return nil, fmt.Errorf("dataset: unknown preset %q (valid: %s)", name, presetNames())
}

// need returns dir/rel, or an error saying which preset expects which file.
func need(preset, dir, rel, what string) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("dataset %s: missing %s: preset %s expects %s (%s) under %s", preset, p, preset, rel, what, dir)
		}
		return "", fmt.Errorf("dataset %s: %w", preset, err)
	}
	return p, nil
}

// --------------------------------------------------------------------------
// Format readers used by the presets. They are strict: any malformed line is
// an error.

// readGLUE reads GLUE's "sentence<TAB>label" TSV with its header, dropping
// the space GLUE leaves before the TAB.
func readGLUE(path string) ([]Example, error) {
	var out []Example
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if line == 1 {
			if string(b) != "sentence\tlabel" {
				return &LineError{path, line, fmt.Sprintf("want the header %q, got %q", "sentence\tlabel", b)}
			}
			return nil
		}
		if len(b) == 0 {
			return nil
		}
		f := bytes.Split(b, []byte{'\t'})
		if len(f) != 2 {
			return &LineError{path, line, fmt.Sprintf("%d columns, want 2 (sentence, label)", len(f))}
		}
		ex, err := binaryExample(path, line, f[1], bytes.TrimRight(f[0], " "))
		if err != nil {
			return err
		}
		out = append(out, ex)
		return nil
	})
	return out, err
}

func binaryExample(path string, line int, label, txt []byte) (Example, error) {
	var l int
	switch string(label) {
	case "0":
		l = 0
	case "1":
		l = 1
	default:
		return Example{}, &LineError{path, line, fmt.Sprintf("label %q, want 0 or 1", label)}
	}
	if !utf8.Valid(txt) {
		return Example{}, &LineError{path, line, "invalid UTF-8"}
	}
	if len(bytes.TrimSpace(txt)) == 0 {
		return Example{}, &LineError{path, line, "empty text"}
	}
	return Example{Text: string(txt), Label: l}, nil
}

// readSep reads "label<sep>text" lines with a 0/1 label (stsa.binary uses a
// space, MR's TSV a TAB).
func readSep(path string, sep byte) ([]Example, error) {
	var out []Example
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if len(b) == 0 {
			return nil
		}
		i := bytes.IndexByte(b, sep)
		if i < 0 {
			return &LineError{path, line, fmt.Sprintf("no %q separator between label and text", sep)}
		}
		ex, err := binaryExample(path, line, b[:i], b[i+1:])
		if err != nil {
			return err
		}
		out = append(out, ex)
		return nil
	})
	return out, err
}

// readTREC reads "COARSE:fine question" lines, decoding stray Latin-1 bytes.
func readTREC(path string) ([]Example, error) {
	idx := map[string]int{}
	for i, c := range trecClasses {
		idx[c] = i
	}
	var out []Example
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if len(b) == 0 {
			return nil
		}
		sp := bytes.IndexByte(b, ' ')
		colon := bytes.IndexByte(b, ':')
		if sp < 0 || colon < 0 || colon > sp {
			return &LineError{path, line, "want \"COARSE:fine question\""}
		}
		l, ok := idx[string(b[:colon])]
		if !ok {
			return &LineError{path, line, fmt.Sprintf("unknown coarse label %q (classes: %s)", b[:colon], strings.Join(trecClasses, ", "))}
		}
		txt := latin1Fallback(b[sp+1:])
		if strings.TrimSpace(txt) == "" {
			return &LineError{path, line, "empty text"}
		}
		out = append(out, Example{Text: txt, Label: l})
		return nil
	})
	return out, err
}

// readAGNews reads AG News' class,title,description CSV.
func readAGNews(path string) ([]Example, error) {
	rc, err := openData(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	r := csv.NewReader(rc)
	r.FieldsPerRecord = -1
	var out []Example
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &LineError{path, pe.StartLine, pe.Err.Error()}
			}
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != 3 {
			return nil, &LineError{path, line, fmt.Sprintf("%d fields, want 3 (class, title, description)", len(rec))}
		}
		var l int
		if len(rec[0]) == 1 && rec[0][0] >= '1' && rec[0][0] <= '4' {
			l = int(rec[0][0] - '1')
		} else {
			return nil, &LineError{path, line, fmt.Sprintf("class %q, want 1..4", rec[0])}
		}
		// "\" encodes a newline in this release.
		txt := strings.ReplaceAll(rec[1]+" . "+rec[2], `\`, " ")
		if !utf8.ValidString(txt) {
			return nil, &LineError{path, line, "invalid UTF-8"}
		}
		out = append(out, Example{Text: txt, Label: l})
	}
}

// --------------------------------------------------------------------------
// Preset loaders.

func loadSST2(dir string) (*Dataset, error) {
	train, err := need("sst2", dir, "sst2-glue/train.tsv", "SST-2 GLUE phrase-level train, TSV sentence<TAB>label")
	if err != nil {
		return nil, err
	}
	dev, err := need("sst2", dir, "sst2-glue/dev.tsv", "SST-2 GLUE dev, TSV sentence<TAB>label")
	if err != nil {
		return nil, err
	}
	test, err := need("sst2", dir, "sst2-stsa/stsa.binary.test", "SST-2 sentence-level test, lines \"label sentence\"")
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Classes: negPos}
	if ds.Train, err = readGLUE(train); err != nil {
		return nil, err
	}
	if ds.Dev, err = readGLUE(dev); err != nil {
		return nil, err
	}
	if ds.Test, err = readSep(test, ' '); err != nil {
		return nil, err
	}
	ds.Notes = []string{
		"train = sst2-glue/train.tsv (GLUE SST-2, phrase level); the trailing space before the TAB is removed",
		"dev = sst2-glue/dev.tsv (the same 872 sentences as stsa.binary.dev)",
		"test = sst2-stsa/stsa.binary.test (GLUE's test set has no labels); lower-cased and tokenised as distributed",
	}
	return ds, nil
}

func loadSST2Sent(dir string) (*Dataset, error) {
	ds := &Dataset{Classes: negPos}
	for _, s := range []struct {
		rel string
		dst *[]Example
	}{{"sst2-stsa/stsa.binary.train", &ds.Train}, {"sst2-stsa/stsa.binary.dev", &ds.Dev}, {"sst2-stsa/stsa.binary.test", &ds.Test}} {
		p, err := need("sst2-sent", dir, s.rel, "Kim (2014) stsa.binary, lines \"label sentence\"")
		if err != nil {
			return nil, err
		}
		if *s.dst, err = readSep(p, ' '); err != nil {
			return nil, err
		}
	}
	ds.Notes = []string{"all splits from sst2-stsa/stsa.binary.{train,dev,test} (Kim 2014); lower-cased and tokenised as distributed"}
	return ds, nil
}

func loadMR(dir string) (*Dataset, error) {
	p, err := need("mr", dir, "mr/rt-polarity.utf8.tsv", "MR as UTF-8 TSV label<TAB>text")
	if err != nil {
		return nil, err
	}
	all, err := readSep(p, '\t')
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Classes: negPos}
	rest, test := StratifiedSplit(all, 0.1, 1)
	train, dev := StratifiedSplit(rest, 0.1, 1)
	ds.Train, ds.Dev, ds.Test = train, dev, test
	ds.Notes = []string{
		"source: mr/rt-polarity.utf8.tsv (10,662 sentences, file order: all positive then all negative)",
		"no official split: rest, test := StratifiedSplit(all, 0.1, seed 1); train, dev := StratifiedSplit(rest, 0.1, seed 1)",
	}
	return ds, nil
}

func loadTREC(dir string) (*Dataset, error) {
	tr, err := need("trec", dir, "trec/TREC.train", "TREC-6 train, lines \"COARSE:fine question\"")
	if err != nil {
		return nil, err
	}
	te, err := need("trec", dir, "trec/TREC.test", "TREC-6 test, lines \"COARSE:fine question\"")
	if err != nil {
		return nil, err
	}
	all, err := readTREC(tr)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Classes: trecClasses}
	if ds.Test, err = readTREC(te); err != nil {
		return nil, err
	}
	// 452 of 5,452 as in FLAT; proportional for other sizes (a trimmed copy).
	ds.Train, ds.Dev = StratifiedSplitN(all, (len(all)*452+5452/2)/5452, 1)
	ds.Notes = []string{
		"classes in Kim (2014)'s order DESC=0, ENTY=1, ABBR=2, HUM=3, LOC=4, NUM=5 (coarse label = text before ':')",
		"TREC.train bytes that are not valid UTF-8 are read as Latin-1 (one 0xF0 byte: \"sister\u00f0city\")",
		"no official dev: train, dev := StratifiedSplitN(TREC.train, 452, seed 1) (FLAT Table 1: 5,000 / 452; for a file of N lines, round(N*452/5452))",
	}
	return ds, nil
}

func loadAGNews(dir string) (*Dataset, error) {
	p, err := need("agnews", dir, "agnews/test.csv", "AG News test CSV \"class\",\"title\",\"description\"")
	if err != nil {
		return nil, err
	}
	all, err := readAGNews(p)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Classes: agClasses}
	tenth := (len(all) + 5) / 10
	rest, test := StratifiedSplitN(all, tenth, 1)
	train, dev := StratifiedSplitN(rest, tenth, 1)
	ds.Train, ds.Dev, ds.Test = train, dev, test
	ds.Notes = []string{
		"DEVIATION: AG News' 120,000-example train set is not available; all splits come from agnews/test.csv (7,600)",
		"text = title + \" . \" + description, with every \"\\\" (a newline escape in this release) replaced by a space; label = class - 1",
		"rest, test := StratifiedSplitN(all, 760, seed 1); train, dev := StratifiedSplitN(rest, 760, seed 1) (80/10/10)",
	}
	return ds, nil
}

// imdbRow is one row of the IMDB part files.
type imdbRow struct {
	source string
	ex     Example
}

// readIMDBPart reads label<TAB>rating<TAB>source_file<TAB>text rows.
func readIMDBPart(path, split string) ([]imdbRow, error) {
	rows := make([]imdbRow, 0, 5000)
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if len(b) == 0 {
			return nil
		}
		f := bytes.SplitN(b, []byte{'\t'}, 4)
		if len(f) != 4 {
			return &LineError{path, line, fmt.Sprintf("%d columns, want 4 (label, rating, source_file, text)", len(f))}
		}
		ex, err := binaryExample(path, line, f[0], f[3])
		if err != nil {
			return err
		}
		src := string(f[2])
		want := split + "/" + [2]string{"neg", "pos"}[ex.Label] + "/"
		if !strings.HasPrefix(src, want) {
			return &LineError{path, line, fmt.Sprintf("source_file %q does not match label %d (want %s...)", src, ex.Label, want)}
		}
		rows = append(rows, imdbRow{src, ex})
		return nil
	})
	return rows, err
}

// readIMDBSplit reads the five parts of a split concurrently (gunzipping is
// the cost), returning rows in part order.
func readIMDBSplit(dir, split string) ([]imdbRow, error) {
	const parts = 5
	paths := make([]string, parts)
	for k := range paths {
		rel := fmt.Sprintf("imdb/%s.part-%02d.tsv.gz", split, k)
		p, err := need("imdb", dir, rel, "IMDB "+split+" part, gzipped TSV label<TAB>rating<TAB>source_file<TAB>text")
		if err != nil {
			return nil, err
		}
		paths[k] = p
	}
	res := make([][]imdbRow, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range paths {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			res[k], errs[k] = readIMDBPart(paths[k], split)
		}(k)
	}
	wg.Wait()
	var all []imdbRow
	for k := range res {
		if errs[k] != nil {
			return nil, errs[k]
		}
		all = append(all, res[k]...)
	}
	return all, nil
}

// readIMDBList reads one of Jia et al.'s lists ("neg/123_4.txt", relative to
// train/) and looks its files up in rows.
func readIMDBList(path, prefix string, bySource map[string]int, used map[string]string, rows []imdbRow) ([]Example, error) {
	var out []Example
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		name := string(bytes.TrimSpace(b))
		if name == "" {
			return nil
		}
		src := prefix + name
		i, ok := bySource[src]
		if !ok {
			return &LineError{path, line, fmt.Sprintf("%s is not in the IMDB part files", src)}
		}
		if prev, dup := used[src]; dup {
			return &LineError{path, line, fmt.Sprintf("%s is listed twice (first at %s)", src, prev)}
		}
		used[src] = fmt.Sprintf("%s:%d", path, line)
		out = append(out, rows[i].ex)
		return nil
	})
	return out, err
}

func loadIMDB(dir string) (*Dataset, error) {
	trList, err := need("imdb", dir, "counterfitted-neighbors-jia2019/imdb_train_files.txt", "Jia et al. (2019) IMDB train list")
	if err != nil {
		return nil, err
	}
	devList, err := need("imdb", dir, "counterfitted-neighbors-jia2019/imdb_dev_files.txt", "Jia et al. (2019) IMDB dev list")
	if err != nil {
		return nil, err
	}
	var trainRows, testRows []imdbRow
	var trErr, teErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); trainRows, trErr = readIMDBSplit(dir, "train") }()
	go func() { defer wg.Done(); testRows, teErr = readIMDBSplit(dir, "test") }()
	wg.Wait()
	if trErr != nil {
		return nil, trErr
	}
	if teErr != nil {
		return nil, teErr
	}
	bySource := make(map[string]int, len(trainRows))
	for i, r := range trainRows {
		if _, dup := bySource[r.source]; dup {
			return nil, fmt.Errorf("dataset imdb: %s appears twice in the train parts", r.source)
		}
		bySource[r.source] = i
	}
	ds := &Dataset{Classes: negPos}
	used := map[string]string{}
	if ds.Train, err = readIMDBList(trList, "train/", bySource, used, trainRows); err != nil {
		return nil, err
	}
	if ds.Dev, err = readIMDBList(devList, "train/", bySource, used, trainRows); err != nil {
		return nil, err
	}
	ds.Test = make([]Example, len(testRows))
	for i, r := range testRows {
		ds.Test[i] = r.ex
	}
	unused := len(trainRows) - len(used)
	ds.Notes = []string{
		"train/dev = Jia et al. (2019) lists counterfitted-neighbors-jia2019/imdb_{train,dev}_files.txt (list order), joined on source_file in imdb/train.part-*.tsv.gz",
		"test = all rows of imdb/test.part-00..04.tsv.gz in file order (part k holds the neg and pos files ranked k*2500..k*2500+2499 by id)",
		"text is the raw review, <br /> tags included",
	}
	if unused > 0 {
		ds.Notes = append(ds.Notes, fmt.Sprintf("%d train reviews are in neither list", unused))
	}
	return ds, nil
}

// PieceLen is the truncation length for transformer models, in word pieces
// with [CLS] and [SEP]: 256 for IMDB (its reviews average about 300
// pieces; 256 is the and many papers' setting), 128 elsewhere
// (GLUE fine-tuning's max_seq_length, which every sentence of the other
// presets fits).
func (p Preset) PieceLen() int {
	if p.Name == "imdb" {
		return 256
	}
	return 128
}
