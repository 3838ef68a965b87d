package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SimPair is a sentence pair with a graded similarity (STS, 0–5) or
// relatedness (SICK, 1–5) score given by annotators. A and B are the raw
// sentences as stored in the file, not tokenised.
type SimPair struct {
	A, B  string
	Score float64
}

// stsSubsets are the scored test sets of each SemEval STS year, sorted
// (byte order), as the sts12-16/ folder of shared/data holds them and as
// SentEval evaluates them (STS13 without SMT, whose input is not
// redistributable).
var stsSubsets = map[int][]string{
	2012: {"MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"},
	2013: {"FNWN", "OnWN", "headlines"},
	2014: {"OnWN", "deft-forum", "deft-news", "headlines", "images", "tweet-news"},
	2015: {"answers-forums", "answers-students", "belief", "headlines", "images"},
	2016: {"answer-answer", "headlines", "plagiarism", "postediting", "question-question"},
}

// stsYear accepts 2012..2016, or 12..16.
func stsYear(year int) (int, error) {
	if year >= 12 && year <= 16 {
		year += 2000
	}
	if _, ok := stsSubsets[year]; !ok {
		return 0, fmt.Errorf("dataset sts: no STS year %d (valid: 2012..2016, or 12..16)", year)
	}
	return year, nil
}

// STSSubsets returns the subset names of STS year (2012..2016, or 12..16)
// in sorted (byte) order, the keys of the map LoadSTS returns; iterate over
// it for a stable report order.
func STSSubsets(year int) ([]string, error) {
	y, err := stsYear(year)
	if err != nil {
		return nil, err
	}
	return slices.Clone(stsSubsets[y]), nil
}

// needData returns dir/rel, or an error naming the file the loader expects.
func needData(name, dir, rel, what string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("dataset %s: no data folder given", name)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("dataset %s: missing %s: expected %s (%s) under %s", name, p, rel, what, dir)
		}
		return "", fmt.Errorf("dataset %s: %w", name, err)
	}
	return p, nil
}

// parseScore parses an annotator score and checks it lies in [lo, hi]
// (which also rejects NaN and infinities).
func parseScore(path string, line int, s string, lo, hi float64) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, &LineError{path, line, fmt.Sprintf("score %q is not a number", s)}
	}
	if !(v >= lo && v <= hi) {
		return 0, &LineError{path, line, fmt.Sprintf("score %s outside [%g, %g]", s, lo, hi)}
	}
	return v, nil
}

// simPair checks the two sentences (valid UTF-8, not blank) and builds the
// pair.
func simPair(path string, line int, a, b []byte, score float64) (SimPair, error) {
	for i, s := range [][]byte{a, b} {
		if !utf8.Valid(s) {
			return SimPair{}, &LineError{path, line, fmt.Sprintf("sentence %d: invalid UTF-8", i+1)}
		}
		if len(bytes.TrimSpace(s)) == 0 {
			return SimPair{}, &LineError{path, line, fmt.Sprintf("sentence %d is empty", i+1)}
		}
	}
	return SimPair{A: string(a), B: string(b), Score: score}, nil
}

// LoadSTSB reads a split (train, dev or test) of the STS Benchmark (Cer et
// al. 2017) from dataDir/stsb/sts-<split>.csv, the original release: TSV
// without header or quoting, columns genre, source file, year, pair id,
// score (0–5), sentence 1, sentence 2. Some rows carry 2 more columns (the
// source of the sentences), which are ignored. Lines are split on TAB only:
// sentences contain unbalanced '"', so a CSV parser would merge rows.
//
// Blank lines are ignored. A row with another number of columns than 7 or
// 9, a score that is not a number in [0, 5], or an empty or non-UTF-8
// sentence is an error "path:line: what is wrong" (*LineError); so is a
// file without pairs. The pairs come in file order (train 5,749, dev 1,500,
// test 1,379 pairs).
func LoadSTSB(dataDir, split string) ([]SimPair, error) {
	switch split {
	case "train", "dev", "test":
	default:
		return nil, fmt.Errorf("dataset stsb: unknown split %q (valid: train, dev, test)", split)
	}
	rel := "stsb/sts-" + split + ".csv"
	path, err := needData("stsb", dataDir, rel, "STS Benchmark, TSV genre, file, year, id, score, sentence 1, sentence 2")
	if err != nil {
		return nil, err
	}
	return readSTSB(path)
}

func readSTSB(path string) ([]SimPair, error) {
	return readScoredTSV(path, "", scoredColumns{
		ok:    func(n int) bool { return n == 7 || n == 9 },
		want:  "7 (genre, file, year, id, score, sentence 1, sentence 2) or 9 (with 2 source columns)",
		score: 4, a: 5, b: 6, lo: 0, hi: 5,
	})
}

// scoredColumns describes a TSV file of scored pairs: which column counts
// a row may have (ok, described by want), the columns of the score and the
// two sentences, and the score's range.
type scoredColumns struct {
	ok       func(int) bool
	want     string
	score, a int
	b        int
	lo, hi   float64
}

// readScoredTSV reads the pairs of a TAB-separated file whose first line
// must be header (when not ""); blank lines are skipped, and a file
// without pairs is an error.
func readScoredTSV(path, header string, c scoredColumns) ([]SimPair, error) {
	var out []SimPair
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if line == 1 && header != "" {
			if string(b) != header {
				return &LineError{path, line, fmt.Sprintf("want the header %q, got %q", header, b)}
			}
			return nil
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		f := bytes.Split(b, []byte{'\t'})
		if !c.ok(len(f)) {
			return &LineError{path, line, fmt.Sprintf("%d columns, want %s", len(f), c.want)}
		}
		score, err := parseScore(path, line, string(f[c.score]), c.lo, c.hi)
		if err != nil {
			return err
		}
		p, err := simPair(path, line, f[c.a], f[c.b], score)
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dataset: %s: no pairs", path)
	}
	return out, nil
}

// LoadSTS reads the SemEval STS test sets of one year (2012..2016, or
// 12..16) from dataDir/sts12-16/STS<yy>/, keyed by subset name (the names
// STSSubsets gives, all of which must be present).
//
// Each subset is a pair of line-aligned files: STS.input.<set>.txt,
// "sentence 1<TAB>sentence 2" (STS16 adds 2 columns, the source of each
// sentence, which are ignored), and STS.gs.<set>.txt, one score (0–5) per
// line. An empty (or blank) gs line means the pair is unscored: it is
// skipped, as SentEval does (STS15 and STS16 have such lines); its input
// line must still have the right number of columns, which keeps the files
// checked for alignment, but its sentences may be empty. The pairs of a
// subset come in file order.
//
// Errors read "path:line: what is wrong" (*LineError): files with different
// numbers of lines (at the first line the shorter file lacks), a gs line
// that is not a number in [0, 5], an input line with the wrong number of
// columns (2, or 4 for STS16), or a scored pair with an empty or non-UTF-8
// sentence; a subset without scored pairs is an error too. Scored pairs:
// STS12 3,108, STS13 1,500, STS14 3,750, STS15 3,000, STS16 1,186.
func LoadSTS(dataDir string, year int) (map[string][]SimPair, error) {
	y, err := stsYear(year)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("sts%d", y%100)
	cols := 2
	if y == 2016 {
		cols = 4
	}
	out := make(map[string][]SimPair, len(stsSubsets[y]))
	for _, set := range stsSubsets[y] {
		dir := fmt.Sprintf("sts12-16/STS%d/", y%100)
		in, err := needData(name, dataDir, dir+"STS.input."+set+".txt", "sentence pairs, TAB-separated")
		if err != nil {
			return nil, err
		}
		gs, err := needData(name, dataDir, dir+"STS.gs."+set+".txt", "one gold score per line, empty = unscored")
		if err != nil {
			return nil, err
		}
		pairs, err := readSTSSet(in, gs, cols)
		if err != nil {
			return nil, err
		}
		out[set] = pairs
	}
	return out, nil
}

// readLines returns the lines of path (without their line ends).
func readLines(path string) ([]string, error) {
	var lines []string
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		lines = append(lines, string(b))
		return nil
	})
	return lines, err
}

// readSTSSet reads one STS subset: input lines with cols TAB-separated
// columns (the first two are the sentences) aligned with gs score lines.
func readSTSSet(inPath, gsPath string, cols int) ([]SimPair, error) {
	in, err := readLines(inPath)
	if err != nil {
		return nil, err
	}
	gs, err := readLines(gsPath)
	if err != nil {
		return nil, err
	}
	if len(in) != len(gs) {
		short, long := gsPath, inPath
		if len(gs) > len(in) {
			short, long = inPath, gsPath
		}
		n := min(len(in), len(gs))
		return nil, &LineError{long, n + 1, fmt.Sprintf("no matching line in %s, which has %d lines (this file has %d): the input and gs files are not aligned", short, n, max(len(in), len(gs)))}
	}
	var out []SimPair
	for i := range in {
		line := i + 1
		f := strings.Split(in[i], "\t")
		if len(f) != cols {
			return nil, &LineError{inPath, line, fmt.Sprintf("%d columns, want %d", len(f), cols)}
		}
		s := strings.TrimSpace(gs[i])
		if s == "" {
			continue // unscored pair
		}
		score, err := parseScore(gsPath, line, s, 0, 5)
		if err != nil {
			return nil, err
		}
		p, err := simPair(inPath, line, []byte(f[0]), []byte(f[1]), score)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dataset: %s: no scored pairs", gsPath)
	}
	return out, nil
}

// sickHeader is the header row of the SemEval-2014 Task 1 SICK files.
const sickHeader = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"

// LoadSICKR reads the relatedness scores (1–5) of a SICK split (Marelli et
// al. 2014) in its SemEval-2014 Task 1 release: split "train", "trial" (also
// "dev", the name SentEval gives it) or "test", from
// dataDir/sick/SICK_{train,trial,test_annotated}.txt. These are TSV files
// with the header "pair_ID sentence_A sentence_B relatedness_score
// entailment_judgment"; the test file ends its lines with CRLF, which is
// handled.
//
// Blank lines are ignored. A wrong header, a row without exactly 5 columns,
// a score that is not a number in [1, 5], or an empty or non-UTF-8 sentence
// is an error "path:line: what is wrong" (*LineError); so is a file without
// pairs. The pairs come in file order (train 4,500, trial 500, test 4,927
// pairs).
func LoadSICKR(dataDir, split string) ([]SimPair, error) {
	var file string
	switch split {
	case "train", "trial":
		file = "SICK_" + split + ".txt"
	case "dev":
		file = "SICK_trial.txt"
	case "test":
		file = "SICK_test_annotated.txt"
	default:
		return nil, fmt.Errorf("dataset sick: unknown split %q (valid: train, trial (= dev), test)", split)
	}
	path, err := needData("sick", dataDir, "sick/"+file, "SemEval-2014 SICK TSV with header")
	if err != nil {
		return nil, err
	}
	return readSICK(path)
}

func readSICK(path string) ([]SimPair, error) {
	return readScoredTSV(path, sickHeader, scoredColumns{
		ok:    func(n int) bool { return n == 5 },
		want:  "5 (pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment)",
		score: 3, a: 1, b: 2, lo: 1, hi: 5,
	})
}

// SimScores returns the scores of pairs, in order: the gold vector to
// correlate with a model's similarities (metrics.Spearman).
func SimScores(pairs []SimPair) []float64 {
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		out[i] = p.Score
	}
	return out
}
