package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/textarmor/textarmor/attack"
)

// hasAttackHeader reports whether the CSV file at path starts with the
// attack results header; why not, when it does not.
func hasAttackHeader(path string) (ok bool, why string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, "", err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	switch {
	case err != nil:
		return false, "a CSV that is not an attack results file", nil
	case slices.Equal(header, attack.Columns):
		return true, "", nil
	case len(header) > 0 && len(header) < len(attack.Columns) && slices.Equal(header, attack.Columns[:len(header)]):
		return false, "an attack results file from an older textarmor (no " + attack.Columns[len(header)] + " column)", nil
	}
	return false, "a CSV that is not an attack results file", nil
}

// readAttackCSV reads an attack results file and its run record.
func (r *Report) readAttackCSV(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return fmt.Errorf("%s: empty file, not an attack results file", path)
	}
	// attack.ReadCSV names the file and the line of a bad row.
	rs, _, err := attack.ReadCSV(path)
	if err != nil {
		return err
	}
	run := AttackRun{Path: path, Summary: attack.Summarize(rs)}
	if raw, err := os.ReadFile(path + ".run.json"); err == nil {
		var id map[string]string
		if err := json.Unmarshal(raw, &id); err != nil {
			return fmt.Errorf("%s.run.json: %w", path, err)
		}
		run.Recipe, run.Dataset = id["recipe"], id["dataset"]
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, res := range rs {
		if res.Type == attack.Skipped {
			continue
		}
		run.Queries = append(run.Queries, res.NumQueries)
		if res.Type != attack.Successful {
			continue
		}
		run.PerturbedPct = append(run.PerturbedPct, res.PerturbedPct())
		if len(run.Examples) < r.examples {
			o, p := markChanges(res.OriginalText, res.PerturbedText)
			run.Examples = append(run.Examples, Example{Index: res.Index, GroundTruth: res.GroundTruth,
				OriginalOut: res.OriginalOutput, PerturbedOut: res.PerturbedOutput, Original: o, Perturbed: p,
				NumQueries: res.NumQueries, PerturbedPct: res.PerturbedPct()})
		}
	}
	r.Attacks = append(r.Attacks, run)
	return nil
}

// markChanges splits both texts into words and marks those that differ:
// word by word when the counts agree (a substitution attack), otherwise
// by a word-level diff (an attack that split or joined words).
func markChanges(orig, pert string) (o, p []Word) {
	ow, pw := strings.Fields(orig), strings.Fields(pert)
	if len(ow) == len(pw) {
		for i := range ow {
			ch := ow[i] != pw[i]
			o = append(o, Word{ow[i], ch})
			p = append(p, Word{pw[i], ch})
		}
		return o, p
	}
	// One word per line: the diff's line mode is then a word diff.
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToRunes(joinLines(ow), joinLines(pw))
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMainRunes(a, b, false), lines) {
		words := strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n")
		for _, w := range words {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				o, p = append(o, Word{w, false}), append(p, Word{w, false})
			case diffmatchpatch.DiffDelete:
				o = append(o, Word{w, true})
			case diffmatchpatch.DiffInsert:
				p = append(p, Word{w, true})
			}
		}
	}
	return o, p
}

func joinLines(words []string) string {
	if len(words) == 0 {
		return ""
	}
	return strings.Join(words, "\n") + "\n"
}

// scoreAttacks adds the accuracy of the results files no table or
// summary holds: a row per model (the folder, when the file is named
// after its recipe, as the tables' rows are), a column per recipe.
func (r *Report) scoreAttacks() {
	for _, a := range r.Attacks {
		if a.Covered || a.Summary.N == 0 {
			continue
		}
		group := "attack results"
		if a.Dataset != "" {
			group += ", " + a.Dataset
		}
		label := r.label(a.Path)
		stem := strings.TrimSuffix(filepath.Base(a.Path), ".csv")
		row := strings.TrimSuffix(label, ".csv")
		if a.Recipe != "" && stem == a.Recipe && strings.Contains(label, "/") {
			row = label[:strings.LastIndex(label, "/")]
		}
		col := a.Recipe
		if col == "" {
			col = "under attack"
		}
		r.addCleanScore("", group, row, col, 100*a.Summary.OriginalAccuracy, a.Summary.N)
		r.Scores = append(r.Scores, Score{Group: group, Metric: metricAccuracy, Row: row, Column: col,
			Value: 100 * a.Summary.AccuracyUnderAttack, N: a.Summary.N})
	}
}

const (
	metricAccuracy = "accuracy (%)"
	metricASR      = "attack success rate (%)"
)

// addCleanScore adds a row's clean accuracy once; a second, different
// value (another sample) gets a column of its own, named by attack.
func (r *Report) addCleanScore(source, group, row, attackName string, v float64, n int) {
	for _, s := range r.Scores {
		if s.Source == source && s.Group == group && s.Row == row && s.Column == "clean" {
			if s.Value == v {
				return
			}
			r.Scores = append(r.Scores, Score{Source: source, Group: group, Metric: metricAccuracy, Row: row,
				Column: "clean (" + attackName + " sample)", Value: v, N: n})
			return
		}
	}
	r.Scores = append(r.Scores, Score{Source: source, Group: group, Metric: metricAccuracy, Row: row, Column: "clean", Value: v, N: n})
}
