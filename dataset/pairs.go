package dataset

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"unicode/utf8"
)

// Sentence-pair presets (RobustEmbed Table 3, spec robustembed.md §7.3):
// MRPC paraphrase and SNLI entailment. An example holds the first text in
// Text and the second in Text2.

// mrpcClasses are GLUE's names for MRPC's Quality 0 and 1.
var mrpcClasses = []string{"not_equivalent", "equivalent"}

// snliClasses are SNLI's gold labels in the usual order (Hugging Face's
// snli and GLUE's MNLI number them so).
var snliClasses = []string{"entailment", "neutral", "contradiction"}

// mrpcHeader is the first line of msr_paraphrase_{train,test}.txt (after
// the byte order mark, which the line reader drops).
const mrpcHeader = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"

// MRPCDev is the size of the dev set carved from MRPC's train file: GLUE's
// (408 pairs), whose id list is not in the data.
const MRPCDev = 408

// readMRPC reads an MSR paraphrase file: the header, then
// Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String<TAB>#2 String rows. Quotes are
// not escaped in this release, so it is split on TAB, not parsed as CSV.
// Blank lines are skipped.
func readMRPC(path string) ([]Example, error) {
	var out []Example
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if line == 1 {
			if string(b) != mrpcHeader {
				return &LineError{path, line, fmt.Sprintf("want the header %q, got %q", mrpcHeader, b)}
			}
			return nil
		}
		if len(b) == 0 {
			return nil
		}
		f := bytes.Split(b, []byte{'\t'})
		if len(f) != 5 {
			return &LineError{path, line, fmt.Sprintf("%d columns, want 5 (Quality, #1 ID, #2 ID, #1 String, #2 String)", len(f))}
		}
		for k, id := range f[1:3] {
			if len(id) == 0 || len(bytes.Trim(id, "0123456789")) > 0 {
				return &LineError{path, line, fmt.Sprintf("#%d ID %q is not a number", k+1, id)}
			}
		}
		ex, err := binaryExample(path, line, f[0], f[3])
		if err != nil {
			return err
		}
		if !utf8.Valid(f[4]) {
			return &LineError{path, line, "invalid UTF-8"}
		}
		if len(bytes.TrimSpace(f[4])) == 0 {
			return &LineError{path, line, "empty second sentence"}
		}
		ex.Text2 = string(f[4])
		out = append(out, ex)
		return nil
	})
	return out, err
}

func loadMRPC(dir string) (*Dataset, error) {
	tr, err := need("mrpc", dir, "mrpc/msr_paraphrase_train.txt", "MSR paraphrase train, TSV Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String<TAB>#2 String with a header")
	if err != nil {
		return nil, err
	}
	te, err := need("mrpc", dir, "mrpc/msr_paraphrase_test.txt", "MSR paraphrase test, same format")
	if err != nil {
		return nil, err
	}
	all, err := readMRPC(tr)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Classes: mrpcClasses}
	if ds.Test, err = readMRPC(te); err != nil {
		return nil, err
	}
	// 408 of 4,076 as GLUE; proportional for other sizes (a trimmed copy).
	ds.Train, ds.Dev = StratifiedSplitN(all, (len(all)*MRPCDev+4076/2)/4076, 1)
	ds.Notes = []string{
		"sentence pairs: Text = #1 String, Text2 = #2 String, label = Quality (0 not_equivalent, 1 equivalent); the untokenised original files",
		"train, dev := StratifiedSplitN(msr_paraphrase_train.txt, 408, seed 1): GLUE's dev size, not its pairs (GLUE's id list is not in the data; for a file of N rows, round(N*408/4076)); test = msr_paraphrase_test.txt",
		"some sentences (264 sentence ids) occur in both the train and the test file, in different pairs, as in the corpus",
	}
	return ds, nil
}

// readUTF8Lines reads a file of one field per line (SNLI's s1/s2/labels),
// keeping blank lines so that the files stay aligned.
func readUTF8Lines(path string) ([]string, error) {
	var out []string
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		if !utf8.Valid(b) {
			return &LineError{path, line, "invalid UTF-8"}
		}
		out = append(out, string(b))
		return nil
	})
	return out, err
}

// readSNLI reads one SentEval SNLI split: s1.<split> (premises),
// s2.<split> (hypotheses) and labels.<split>, aligned line by line. Pairs
// labelled "-" (no gold label) are dropped and counted; the trailing space
// of SentEval's tokenised lines is removed.
func readSNLI(s1, s2, labels string) (ex []Example, dropped int, err error) {
	var cols [3][]string
	for k, p := range []string{s1, s2, labels} {
		if cols[k], err = readUTF8Lines(p); err != nil {
			return nil, 0, err
		}
	}
	n := len(cols[2])
	for k, p := range []string{s1, s2} {
		if len(cols[k]) != n {
			short := p
			if len(cols[k]) > n {
				short = labels
			}
			return nil, 0, &LineError{short, min(len(cols[k]), n) + 1, fmt.Sprintf("%s has %d lines, %s %d: the files must be aligned", p, len(cols[k]), labels, n)}
		}
	}
	idx := map[string]int{}
	for i, c := range snliClasses {
		idx[c] = i
	}
	for i := 0; i < n; i++ {
		label := strings.TrimSpace(cols[2][i])
		if label == "-" {
			dropped++
			continue
		}
		l, ok := idx[label]
		if !ok {
			return nil, 0, &LineError{labels, i + 1, fmt.Sprintf("label %q (want %s, or - for no gold label)", cols[2][i], strings.Join(snliClasses, ", "))}
		}
		a, b := strings.TrimRight(cols[0][i], " "), strings.TrimRight(cols[1][i], " ")
		for k, s := range []string{a, b} {
			if strings.TrimSpace(s) == "" {
				return nil, 0, &LineError{[]string{s1, s2}[k], i + 1, "empty sentence"}
			}
		}
		ex = append(ex, Example{Text: a, Text2: b, Label: l})
	}
	return ex, dropped, nil
}

// SNLIDevShare is the share of SNLI dev's premises held out as the dev set;
// the rest of SNLI dev is the training set (the data has no SNLI train).
const SNLIDevShare = 0.1

func loadSNLI(dir string) (*Dataset, error) {
	var paths [2][3]string
	for s, split := range []string{"dev", "test"} {
		for k, f := range []string{"s1", "s2", "labels"} {
			what := map[string]string{"s1": "premises", "s2": "hypotheses", "labels": "gold labels entailment/neutral/contradiction"}[f]
			p, err := need("snli", dir, "snli/"+f+"."+split, "SentEval SNLI "+split+" "+what+", one per line, aligned with the other two files")
			if err != nil {
				return nil, err
			}
			paths[s][k] = p
		}
	}
	dev, dropDev, err := readSNLI(paths[0][0], paths[0][1], paths[0][2])
	if err != nil {
		return nil, err
	}
	test, dropTest, err := readSNLI(paths[1][0], paths[1][1], paths[1][2])
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Classes: snliClasses, Test: test}
	ds.Train, ds.Dev = SplitByFirst(dev, int(float64(len(dev))*SNLIDevShare+0.5), 1)
	ds.Notes = []string{
		"sentence pairs: Text = premise (s1), Text2 = hypothesis (s2); classes entailment, neutral, contradiction; SentEval's tokenised files, trailing space removed",
		"DEVIATION: the data has no SNLI train split; train and dev both come from SNLI dev: train, dev := SplitByFirst(SNLI dev, 10% of its pairs, seed 1), which holds out whole premises (no premise in both); test = the official SNLI test, untouched",
		fmt.Sprintf("pairs without a gold label (-) dropped: %d in dev, %d in test", dropDev, dropTest),
	}
	return ds, nil
}

// SplitByFirst holds out the pairs of whole first texts (premises): b gets
// at least n of ex's examples (all of them when n ≥ len(ex)), a the rest,
// and no first text is in both. The recipe, part of a stored split: the
// distinct first texts in order of first occurrence are permuted by
// math/rand seeded with seed (rng.Perm), and taken in that order, each
// with all its pairs, until b holds n or more. Both parts keep the input
// order. A premise's hypotheses are a few pairs of every label, so the
// labels stay close to balanced without stratifying.
func SplitByFirst(ex []Example, n int, seed int64) (a, b []Example) {
	group := map[string]int{}
	var sizes []int
	of := make([]int, len(ex))
	for i, e := range ex {
		g, ok := group[e.Text]
		if !ok {
			g = len(sizes)
			group[e.Text] = g
			sizes = append(sizes, 0)
		}
		sizes[g]++
		of[i] = g
	}
	held := make([]bool, len(sizes))
	got := 0
	for _, g := range rand.New(rand.NewSource(seed)).Perm(len(sizes)) {
		if got >= n {
			break
		}
		held[g] = true
		got += sizes[g]
	}
	for i, e := range ex {
		if held[of[i]] {
			b = append(b, e)
		} else {
			a = append(a, e)
		}
	}
	return a, b
}
