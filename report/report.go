// Package report turns textarmor's result files — attack results CSVs and
// their JSON summaries, the table.json of the bench tables, training logs —
// into one self-contained HTML page with charts (go-echarts options, the
// ECharts library inlined): accuracy under attack per defense and attack,
// perturbed-word and query distributions, accuracy against ε, training
// curves, and the adversarial examples with their changed words marked.
//
// Collect reads the inputs (files or folders, walked), Report.WriteHTML
// renders the page and Report.WriteFile writes it atomically.
package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/attack"
)

// DefaultExamples is how many adversarial examples a results file shows
// by default: enough to read, few enough that a 25,000-row file gives a
// page a browser opens at once.
const DefaultExamples = 20

// Options control Collect.
type Options struct {
	// Title heads the page ("" gives "textarmor report").
	Title string
	// Examples is how many successful attacks per results file the page
	// shows, in file order (0 = DefaultExamples; negative = none).
	Examples int
}

// Kinds of input file.
const (
	KindAttackCSV     = "attack results CSV"
	KindAttackSummary = "attack summary JSON"
	KindEmbedAttack   = "embedding attack JSON"
	KindFTMLCell      = "ftml-table cell JSON"
	KindTable         = "bench table.json"
	KindTrainLog      = "training log"
)

// Source is one file the report was built from.
type Source struct {
	Path  string // as found (relative to the working folder when given so)
	Kind  string // one of the Kind constants
	Label string // the shortest path suffix that tells it from the others
	// Table is the bench table's kind for KindTable (carl-table, …).
	Table string
}

// Score is one bar: a value (percent) of a row (a defense, a model) under
// a column (clean, an attack) within a group (a dataset of a table).
type Score struct {
	Source string // path of the file it is from; "" for attack CSVs pooled
	Group  string
	Metric string // "accuracy (%)", "attack success rate (%)", …
	Row    string
	Column string
	Value  float64
	N      int // examples behind the value (0: unknown)
}

// Curve is a series of accuracy against ε (embedding-space attacks).
type Curve struct {
	Source string
	Group  string
	Series string
	Points []EpsPoint // by ε ascending; ε 0 is the clean accuracy
}

// EpsPoint is one point of a Curve.
type EpsPoint struct {
	Eps      float64
	Accuracy float64 // percent
	N        int
}

// AttackRun is one attack results file.
type AttackRun struct {
	Path    string
	Recipe  string // from the run record beside it ("" when absent)
	Dataset string
	Summary attack.Summary
	// PerturbedPct is each successful attack's perturbed-word percentage;
	// Queries each non-skipped example's distinct model queries.
	PerturbedPct []float64
	Queries      []int
	// Examples are the first successful attacks (Options.Examples).
	Examples []Example
	// Covered is set when a table or JSON summary read too holds this
	// file's numbers: its accuracy is not drawn twice.
	Covered bool
}

// Example is one successful attack, its texts split into words with the
// changed ones marked.
type Example struct {
	Index                                  int
	GroundTruth, OriginalOut, PerturbedOut int
	Original, Perturbed                    []Word
	NumQueries                             int
	PerturbedPct                           float64
}

// Word is a word of an example's text; Changed marks one the attack
// replaced (in the original: removed; in the perturbed text: put in).
type Word struct {
	Text    string
	Changed bool
}

// TrainLog is a training log; a log appended by several runs (the epoch
// count starting over) holds one Run each.
type TrainLog struct {
	Path string
	Runs [][]Epoch
}

// Epoch is one line of a training log (train.EpochStats' fields used).
type Epoch struct {
	Epoch     int
	TrainLoss float64
	TrainAcc  float64
	DevAcc    float64
}

// Report is what the page shows.
type Report struct {
	Title   string
	Sources []Source
	// Skipped names the files a folder walk passed over, with the reason.
	Skipped []string
	Scores  []Score
	Curves  []Curve
	Attacks []AttackRun
	Logs    []TrainLog

	examples int
}

// Collect reads the result files at paths: files of a known kind (an
// attack results .csv, a .json summary or bench table.json, a .jsonl
// training log) or folders, walked for table.json, attack results CSVs,
// *.log.jsonl and the JSON summaries a recognised kind; folders holding a
// model (model.safetensors) are not entered. A file given by name that is
// of no known kind or does not parse is an error naming it (and the line,
// for CSV and JSON lines); a folder's other files are listed in Skipped.
func Collect(paths []string, opt Options) (*Report, error) {
	if len(paths) == 0 {
		return nil, errors.New("no result files or folders given")
	}
	r := &Report{Title: opt.Title, examples: opt.Examples}
	if r.Title == "" {
		r.Title = "textarmor report"
	}
	switch {
	case r.examples == 0:
		r.examples = DefaultExamples
	case r.examples < 0:
		r.examples = 0
	}
	var files []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		abs, err := filepath.Abs(c.path)
		if err != nil || seen[abs] {
			return
		}
		seen[abs] = true
		c.abs = abs
		files = append(files, c)
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			add(candidate{path: p, named: true})
			continue
		}
		found, skipped, err := walk(p)
		if err != nil {
			return nil, err
		}
		r.Skipped = append(r.Skipped, skipped...)
		for _, c := range found {
			add(c)
		}
	}
	// Tables first: the files under a table's folder are its cells.
	var tableDirs []string
	for _, c := range files {
		if filepath.Base(c.path) == "table.json" {
			tableDirs = append(tableDirs, filepath.Dir(c.abs)+string(filepath.Separator))
		}
	}
	underTable := func(abs string) bool {
		return slices.ContainsFunc(tableDirs, func(d string) bool {
			return strings.HasPrefix(abs, d) && filepath.Base(abs) != "table.json"
		})
	}
	summaries := map[string]bool{} // results CSVs a JSON summary stands for
	for _, c := range files {
		kind, err := r.read(&c, underTable(c.abs), summaries)
		if err != nil {
			return nil, err
		}
		if kind != "" {
			r.Sources = append(r.Sources, Source{Path: c.path, Kind: kind, Table: c.table})
		}
	}
	for i := range r.Attacks {
		a := &r.Attacks[i]
		abs, _ := filepath.Abs(a.Path)
		a.Covered = underTable(abs) || summaries[abs]
	}
	labels := uniqueLabels(r.Sources)
	for i := range r.Sources {
		r.Sources[i].Label = labels[i]
	}
	r.scoreAttacks()
	if len(r.Sources) == 0 {
		return nil, fmt.Errorf("no result files found in %s (want attack results CSVs, bench table.json, *.log.jsonl training logs, attack --json summaries)", strings.Join(paths, ", "))
	}
	return r, nil
}

// candidate is a file to read.
type candidate struct {
	path, abs string
	named     bool   // given by name: of no known kind is an error
	table     string // set by read for tables
}

// walk lists the result files under dir.
func walk(dir string) (found []candidate, skipped []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && isModelDir(p) {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		switch {
		case !d.Type().IsRegular():
		case strings.HasSuffix(name, ".run.json"), strings.HasSuffix(name, ".model"):
			// A results file's run record: read with it.
		case strings.HasSuffix(name, ".csv"):
			ok, why, err := hasAttackHeader(p)
			if err != nil {
				return err
			}
			if ok {
				found = append(found, candidate{path: p})
			} else {
				skipped = append(skipped, p+": "+why)
			}
		case strings.HasSuffix(name, ".log.jsonl"):
			found = append(found, candidate{path: p})
		case strings.HasSuffix(name, ".json"):
			found = append(found, candidate{path: p})
		}
		return nil
	})
	return found, skipped, err
}

// isModelDir reports whether dir holds a saved model (never results).
func isModelDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	return err == nil
}

// read reads one file into r and returns its kind ("" when a folder
// walk's file is of no kind the report draws, or is a table's cell).
func (r *Report) read(c *candidate, underTable bool, summaries map[string]bool) (string, error) {
	name := filepath.Base(c.path)
	switch {
	case strings.HasSuffix(name, ".csv"):
		return KindAttackCSV, r.readAttackCSV(c.path)
	case strings.HasSuffix(name, ".jsonl"):
		if !c.named && !strings.HasSuffix(name, ".log.jsonl") {
			return "", nil
		}
		err := r.readTrainLog(c.path)
		if errors.Is(err, errEmptyLog) && !c.named {
			r.Skipped = append(r.Skipped, c.path+": "+errEmptyLog.Error())
			return "", nil
		}
		return KindTrainLog, err
	case strings.HasSuffix(name, ".json"):
		if underTable && !c.named {
			return "", nil // the table holds it
		}
		kind, err := r.readJSON(c, summaries)
		if err != nil {
			return "", err
		}
		if kind == "" {
			if c.named {
				return "", fmt.Errorf("%s: not a result file textarmor report knows (want a bench table.json, an 'attack --json' summary, an 'attack --recipe pgd --json' result or an ftml-table cell)", c.path)
			}
			r.Skipped = append(r.Skipped, c.path+": JSON of no kind the report draws")
		}
		return kind, nil
	}
	return "", fmt.Errorf("%s: not a result file textarmor report knows (want .csv attack results, .json summaries or tables, .jsonl training logs)", c.path)
}

// uniqueLabels names each source by the fewest trailing path elements
// that tell it from the others (at least its folder and file name).
func uniqueLabels(srcs []Source) []string {
	parts := make([][]string, len(srcs))
	for i, s := range srcs {
		parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(s.Path)), "/")
	}
	labels := make([]string, len(srcs))
	for i := range srcs {
		for k := min(2, len(parts[i])); ; k++ {
			l := strings.Join(parts[i][len(parts[i])-k:], "/")
			unique := true
			for j := range srcs {
				if j != i && len(parts[j]) >= k && strings.Join(parts[j][len(parts[j])-k:], "/") == l {
					unique = false
					break
				}
			}
			if unique || k == len(parts[i]) {
				labels[i] = l
				break
			}
		}
	}
	return labels
}

// label is the label of the source at path.
func (r *Report) label(path string) string {
	for _, s := range r.Sources {
		if s.Path == path {
			return s.Label
		}
	}
	return path
}
