package dataset

import (
	"bytes"
	"fmt"
	"strings"
)

// The SentEval transfer sets without an official split (MR, CR, SUBJ,
// MPQA) are scored by cross-validation over all their sentences;
// LoadCVSet reads one whole. MRPC has its own loader (LoadMRPC); SST-2 and
// TREC are the presets of the same names (Load).

// cvSets describes each set: its files, in order, with the label of every
// line of each file, and its class names (indexed by label).
var cvSets = map[string]struct {
	files   []string
	labels  []int
	classes []string
	what    string
}{
	"mr":   {[]string{"mr/rt-polarity.utf8.tsv"}, nil, negPos, "MR as UTF-8 TSV label<TAB>text"},
	"cr":   {[]string{"cr/custrev.pos", "cr/custrev.neg"}, []int{1, 0}, negPos, "CR (SentEval), one review sentence per line"},
	"subj": {[]string{"subj/subj.objective", "subj/subj.subjective"}, []int{1, 0}, []string{"subjective", "objective"}, "SUBJ (SentEval), one sentence per line"},
	"mpqa": {[]string{"mpqa/mpqa.pos", "mpqa/mpqa.neg"}, []int{1, 0}, negPos, "MPQA (SentEval), one phrase per line"},
}

// CVSetNames are the names LoadCVSet accepts, in report order.
var CVSetNames = []string{"mr", "cr", "subj", "mpqa"}

// LoadCVSet reads all the sentences of a SentEval transfer set that has
// no official split, for k-fold cross-validation, with its class names
// (indexed by Example.Label):
//
//   - mr: mr/rt-polarity.utf8.tsv (label<TAB>text, 1 = positive; 10,662);
//   - cr: cr/custrev.pos (1) then cr/custrev.neg (0) (3,771);
//   - subj: subj/subj.objective (1 = objective, SentEval's labels) then
//     subj/subj.subjective (0) (10,000);
//   - mpqa: mpqa/mpqa.pos (1) then mpqa/mpqa.neg (0) (10,603).
//
// The one-sentence-per-line files are read as SentEval's copies hold them
// (lower-cased, tokenised; SUBJ's `cat -v` escapes such as "M-i" kept as
// text), with trailing spaces and tabs removed. Blank lines are skipped:
// CR has 2 in each file and MPQA 1 and 2, which SentEval keeps as empty
// sentences (its counts 3,775 and 10,606). A line that is not valid UTF-8
// is read as Latin-1 (none is, in the shared copies). A line too long is an
// error "path:line: ..."; so is a set without sentences of both classes.
func LoadCVSet(dataDir, name string) ([]Example, []string, error) {
	set, ok := cvSets[name]
	if !ok {
		return nil, nil, fmt.Errorf("dataset: unknown cross-validation set %q (valid: %s)", name, strings.Join(CVSetNames, ", "))
	}
	var out []Example
	for i, rel := range set.files {
		path, err := needData(name, dataDir, rel, set.what)
		if err != nil {
			return nil, nil, err
		}
		var ex []Example
		if set.labels == nil {
			ex, err = readSep(path, '\t')
		} else {
			ex, err = readLabelledLines(path, set.labels[i])
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, ex...)
	}
	var seen [2]bool
	for _, e := range out {
		seen[e.Label] = true
	}
	if !seen[0] || !seen[1] {
		return nil, nil, fmt.Errorf("dataset %s: the files under %s hold one class only (%d sentences)", name, dataDir, len(out))
	}
	return out, set.classes, nil
}

// readLabelledLines reads one text per line, all with the given label,
// skipping blank lines and trimming trailing blanks.
func readLabelledLines(path string, label int) ([]Example, error) {
	var out []Example
	err := eachLine(path, func(line int, b []byte, tooLong bool) error {
		if tooLong {
			return &LineError{path, line, "line too long"}
		}
		b = bytes.TrimRight(b, " \t")
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		out = append(out, Example{Text: latin1Fallback(b), Label: label})
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("dataset: %s: no sentences", path)
	}
	return out, err
}

// LabelledPair is a sentence pair with a class: MRPC's label is 1 for a
// paraphrase, 0 otherwise.
type LabelledPair struct {
	A, B  string
	Label int
}

// LoadMRPC reads a split (train or test) of the Microsoft Research
// Paraphrase Corpus (Dolan & Brockett 2005) from
// dataDir/mrpc/msr_paraphrase_<split>.txt, the original untokenised release:
// UTF-8 with a byte order mark, the header "Quality #1 ID #2 ID #1 String
// #2 String", TAB-separated, label 1 = paraphrase. Lines are split on TAB
// only (quotes in the text are not escaped).
//
// Blank lines are skipped. A wrong header, a row without 5 columns, a
// label other than 0 or 1, or an empty or non-UTF-8 sentence is an error
// "path:line: what is wrong" (*LineError); so is a file without pairs. The
// pairs come in file order (train 4,076, test 1,725).
func LoadMRPC(dataDir, split string) ([]LabelledPair, error) {
	if split != "train" && split != "test" {
		return nil, fmt.Errorf("dataset mrpc: unknown split %q (valid: train, test)", split)
	}
	path, err := needData("mrpc", dataDir, "mrpc/msr_paraphrase_"+split+".txt", "MRPC release TSV: Quality, #1 ID, #2 ID, #1 String, #2 String")
	if err != nil {
		return nil, err
	}
	exs, err := readMRPC(path) // the mrpc preset's reader (pairs.go)
	if err != nil {
		return nil, err
	}
	out := make([]LabelledPair, len(exs))
	for i, e := range exs {
		out[i] = LabelledPair{A: e.Text, B: e.Text2, Label: e.Label}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dataset: %s: no pairs", path)
	}
	return out, nil
}
