package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Bench tables the report reads (the command that writes each).
const (
	TableCARL   = "carl-table"
	TableFTML   = "ftml-table"
	TableFLAT   = "flat-table"
	TableSPGD   = "spgd-table"
	TableRobust = "robustembed-table"
)

// jsonError names the file and, for a syntax or type error, the line.
func jsonError(path string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off >= 0 && off <= int64(len(data)) {
		return fmt.Errorf("%s:%d: %w", path, 1+bytes.Count(data[:off], []byte("\n")), err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// readJSON reads a bench table or a JSON summary; "" when the file is of
// no known kind (a walk's config.json, …).
func (r *Report) readJSON(c *candidate, summaries map[string]bool) (string, error) {
	data, err := os.ReadFile(c.path)
	if err != nil {
		return "", err
	}
	isTable := filepath.Base(c.path) == "table.json"
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		if !c.named && !isTable {
			r.Skipped = append(r.Skipped, c.path+": not a JSON object")
			return "", nil
		}
		return "", jsonError(c.path, data, err)
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := top[k]; !ok {
				return false
			}
		}
		return true
	}
	var kind string
	switch {
	case has("cells", "checks") && !has("accuracy") && isObject(top["cells"]):
		c.table, kind, err = TableCARL, KindTable, r.readCARL(c.path, data)
	case has("cells", "clean_n", "dataset"):
		c.table, kind, err = TableFTML, KindTable, r.readFTML(c.path, data)
	case has("values", "attacks", "dataset"):
		c.table, kind, err = TableFLAT, KindTable, r.readFLAT(c.path, data)
	case has("accuracy", "gap", "cells"):
		c.table, kind, err = TableSPGD, KindTable, r.readSPGD(c.path, data)
	case has("advsts", "sts"):
		c.table, kind, err = TableRobust, KindTable, r.readRobust(c.path, data)
	case isTable:
		return "", fmt.Errorf("%s: a table.json of no bench table the report knows (%s, %s, %s, %s, %s)", c.path,
			TableCARL, TableFTML, TableFLAT, TableSPGD, TableRobust)
	case has("attack", "method", "clean_accuracy", "accuracy_under_attack"):
		kind, err = KindEmbedAttack, r.readEmbedAttack(c.path, data)
	case has("recipe", "n", "original_accuracy", "accuracy_under_attack", "attack_success_rate"):
		kind, err = KindAttackSummary, r.readAttackSummary(c.path, data, summaries)
	case has("defense", "column", "accuracy", "n"):
		kind, err = KindFTMLCell, r.readFTMLCell(c.path, data, summaries)
	}
	if err != nil {
		return "", err
	}
	return kind, nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// decode unmarshals data into v, naming the file (and line) on error.
func decode(path string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return jsonError(path, data, err)
	}
	return nil
}

// finite rejects NaN and infinities (not JSON, but a hand-edited file's
// "1e999" decodes to +Inf) so that no chart gets them.
func finite(path, what string, vs ...float64) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: %s is %g", path, what, v)
		}
	}
	return nil
}

// readCARL reads carl-table's table.json: per dataset and row, k-PGD's
// accuracy per ε (a curve and bars) and the word-level attacks'.
func (r *Report) readCARL(path string, data []byte) error {
	type pgdCell struct {
		Attack struct {
			Eps float64 `json:"eps"`
		} `json:"attack"`
		N           int     `json:"n"`
		Clean       float64 `json:"clean_accuracy"`
		UnderAttack float64 `json:"accuracy_under_attack"`
	}
	type wordCell struct {
		N           int     `json:"n"`
		Original    float64 `json:"original_accuracy"`
		UnderAttack float64 `json:"accuracy_under_attack"`
	}
	var t struct {
		Cells map[string]map[string]struct {
			PGD  map[string]pgdCell  `json:"pgd"`
			Word map[string]wordCell `json:"word"`
		} `json:"cells"`
	}
	if err := decode(path, data, &t); err != nil {
		return err
	}
	for _, ds := range slices.Sorted(maps.Keys(t.Cells)) {
		rows := t.Cells[ds]
		for _, row := range orderRows(slices.Collect(maps.Keys(rows)), "plain", "freelb", "carl", "rar") {
			cell := rows[row]
			pgd := make([]pgdCell, 0, len(cell.PGD))
			for _, p := range cell.PGD {
				if err := finite(path, fmt.Sprintf("cells.%s.%s.pgd ε", ds, row), p.Attack.Eps, p.Clean, p.UnderAttack); err != nil {
					return err
				}
				pgd = append(pgd, p)
			}
			sort.Slice(pgd, func(i, j int) bool { return pgd[i].Attack.Eps < pgd[j].Attack.Eps })
			if len(pgd) > 0 {
				c := Curve{Source: path, Group: "k-PGD, " + ds, Series: row,
					Points: []EpsPoint{{Eps: 0, Accuracy: 100 * pgd[0].Clean, N: pgd[0].N}}}
				r.addCleanScore(path, ds, row, "k-PGD", 100*pgd[0].Clean, pgd[0].N)
				for _, p := range pgd {
					c.Points = append(c.Points, EpsPoint{Eps: p.Attack.Eps, Accuracy: 100 * p.UnderAttack, N: p.N})
					r.Scores = append(r.Scores, Score{Source: path, Group: ds, Metric: metricAccuracy, Row: row,
						Column: "k-PGD ε " + strconv.FormatFloat(p.Attack.Eps, 'g', -1, 64), Value: 100 * p.UnderAttack, N: p.N})
				}
				r.Curves = append(r.Curves, c)
			}
			for _, recipe := range slices.Sorted(maps.Keys(cell.Word)) {
				w := cell.Word[recipe]
				if err := finite(path, fmt.Sprintf("cells.%s.%s.word.%s", ds, row, recipe), w.Original, w.UnderAttack); err != nil {
					return err
				}
				// Word cells are in percent already.
				r.Scores = append(r.Scores, Score{Source: path, Group: ds, Metric: metricAccuracy, Row: row, Column: recipe,
					Value: w.UnderAttack, N: w.N})
			}
		}
	}
	return nil
}

// orderRows puts a table's rows in the paper's order, others after by name.
func orderRows(rows []string, order ...string) []string {
	sort.Slice(rows, func(i, j int) bool {
		a, b := slices.Index(order, rows[i]), slices.Index(order, rows[j])
		if a < 0 {
			a = len(order)
		}
		if b < 0 {
			b = len(order)
		}
		if a != b {
			return a < b
		}
		return rows[i] < rows[j]
	})
	return rows
}

// ftmlCell is one cell of ftml-table (experiments.FTMLCell).
type ftmlCell struct {
	Defense  string  `json:"defense"`
	Column   string  `json:"column"`
	Accuracy float64 `json:"accuracy"` // percent
	N        int     `json:"n"`
}

// readFTML reads ftml-table's table.json: accuracy per defense and column.
func (r *Report) readFTML(path string, data []byte) error {
	var t struct {
		Dataset string     `json:"dataset"`
		Arch    string     `json:"arch"`
		Cells   []ftmlCell `json:"cells"`
	}
	if err := decode(path, data, &t); err != nil {
		return err
	}
	group := strings.TrimSpace(t.Dataset + " " + t.Arch)
	for i, c := range t.Cells {
		if c.Defense == "" || c.Column == "" {
			return fmt.Errorf("%s: cells[%d] has no defense or column", path, i)
		}
		if err := finite(path, fmt.Sprintf("cells[%d].accuracy", i), c.Accuracy); err != nil {
			return err
		}
		r.Scores = append(r.Scores, Score{Source: path, Group: group, Metric: metricAccuracy, Row: c.Defense, Column: c.Column, Value: c.Accuracy, N: c.N})
	}
	return nil
}

// readFTMLCell reads one ftml-table cell file (DEFENSE/COLUMN.json).
func (r *Report) readFTMLCell(path string, data []byte, summaries map[string]bool) error {
	var c ftmlCell
	if err := decode(path, data, &c); err != nil {
		return err
	}
	if err := finite(path, "accuracy", c.Accuracy); err != nil {
		return err
	}
	csv, _ := filepath.Abs(strings.TrimSuffix(path, ".json") + ".csv")
	summaries[csv] = true
	r.Scores = append(r.Scores, Score{Group: "ftml-table cells", Metric: metricAccuracy, Row: c.Defense, Column: c.Column, Value: c.Accuracy, N: c.N})
	return nil
}

// readFLAT reads flat-table's table.json: values "ROW/sa" (clean
// accuracy) and "ROW/aa/ATTACK" (accuracy under attack), in percent.
func (r *Report) readFLAT(path string, data []byte) error {
	var t struct {
		Dataset string             `json:"dataset"`
		Arch    string             `json:"arch"`
		Attacks []string           `json:"attacks"`
		Values  map[string]float64 `json:"values"`
	}
	if err := decode(path, data, &t); err != nil {
		return err
	}
	group := strings.TrimSpace(t.Dataset + " " + t.Arch)
	var rows []string
	for k := range t.Values {
		if row, ok := strings.CutSuffix(k, "/sa"); ok {
			rows = append(rows, row)
		}
	}
	for _, row := range orderRows(rows, "base", "adv", "flat") {
		sa := t.Values[row+"/sa"]
		if err := finite(path, row+"/sa", sa); err != nil {
			return err
		}
		r.addCleanScore(path, group, row, "", sa, 0)
		for _, a := range t.Attacks {
			v, ok := t.Values[row+"/aa/"+a]
			if !ok {
				continue
			}
			if err := finite(path, row+"/aa/"+a, v); err != nil {
				return err
			}
			r.Scores = append(r.Scores, Score{Source: path, Group: group, Metric: metricAccuracy, Row: row, Column: a,
				Value: v, N: int(t.Values[row+"/n/"+a])})
		}
	}
	return nil
}

// readSPGD reads spgd-table's table.json: each training method's clean
// test accuracy (percent).
func (r *Report) readSPGD(path string, data []byte) error {
	var t struct {
		Accuracy map[string]float64 `json:"accuracy"`
		Cells    map[string]struct {
			N int `json:"n"`
		} `json:"cells"`
	}
	if err := decode(path, data, &t); err != nil {
		return err
	}
	for _, m := range slices.Sorted(maps.Keys(t.Accuracy)) {
		v := t.Accuracy[m]
		if err := finite(path, "accuracy."+m, v); err != nil {
			return err
		}
		r.Scores = append(r.Scores, Score{Source: path, Group: "training methods", Metric: metricAccuracy, Row: m, Column: "clean",
			Value: v, N: t.Cells[m].N})
	}
	return nil
}

// readRobust reads robustembed-table's table.json: AdvSTS's attack
// success rate per encoder and attack/set (percent).
func (r *Report) readRobust(path string, data []byte) error {
	var t struct {
		AdvSTS map[string]map[string]struct {
			N   int     `json:"N"`
			ASR float64 `json:"ASR"`
		} `json:"advsts"`
	}
	if err := decode(path, data, &t); err != nil {
		return err
	}
	for _, enc := range slices.Sorted(maps.Keys(t.AdvSTS)) {
		cells := t.AdvSTS[enc]
		for _, col := range slices.Sorted(maps.Keys(cells)) {
			c := cells[col]
			if err := finite(path, "advsts."+enc+"."+col, c.ASR); err != nil {
				return err
			}
			r.Scores = append(r.Scores, Score{Source: path, Group: "AdvSTS", Metric: metricASR, Row: enc, Column: col, Value: c.ASR, N: c.N})
		}
	}
	return nil
}

// readEmbedAttack reads 'attack --recipe pgd|fgm --json' output: one
// point of accuracy against ε, joined into a curve with the other files
// of its folder (one model) for the same method and dataset.
func (r *Report) readEmbedAttack(path string, data []byte) error {
	var e struct {
		Attack struct {
			Eps float64 `json:"eps"`
		} `json:"attack"`
		Method      string  `json:"method"`
		Dataset     string  `json:"dataset"`
		N           int     `json:"n"`
		Clean       float64 `json:"clean_accuracy"`
		UnderAttack float64 `json:"accuracy_under_attack"`
	}
	if err := decode(path, data, &e); err != nil {
		return err
	}
	if err := finite(path, "ε or accuracy", e.Attack.Eps, e.Clean, e.UnderAttack); err != nil {
		return err
	}
	group := strings.TrimSpace(e.Method + ", " + e.Dataset)
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	series := filepath.Base(filepath.Dir(abs)) // the folder of one model's files
	var c *Curve
	for i := range r.Curves {
		if r.Curves[i].Source == "" && r.Curves[i].Group == group && r.Curves[i].Series == series {
			c = &r.Curves[i]
		}
	}
	if c == nil {
		r.Curves = append(r.Curves, Curve{Group: group, Series: series, Points: []EpsPoint{{0, 100 * e.Clean, e.N}}})
		c = &r.Curves[len(r.Curves)-1]
	}
	c.Points = append(c.Points, EpsPoint{e.Attack.Eps, 100 * e.UnderAttack, e.N})
	sort.SliceStable(c.Points, func(i, j int) bool { return c.Points[i].Eps < c.Points[j].Eps })
	return nil
}

// readAttackSummary reads 'attack --json' output: the accuracy before and
// under the attack (the results CSV it names is then not counted twice).
func (r *Report) readAttackSummary(path string, data []byte, summaries map[string]bool) error {
	var s struct {
		Recipe      string  `json:"recipe"`
		Dataset     string  `json:"dataset"`
		Model       string  `json:"model"`
		Out         string  `json:"out"`
		N           int     `json:"n"`
		Original    float64 `json:"original_accuracy"`
		UnderAttack float64 `json:"accuracy_under_attack"`
	}
	if err := decode(path, data, &s); err != nil {
		return err
	}
	if err := finite(path, "accuracy", s.Original, s.UnderAttack); err != nil {
		return err
	}
	if s.Out != "" {
		abs, _ := filepath.Abs(s.Out)
		summaries[abs] = true
	}
	row := s.Model
	if row == "" {
		row = strings.TrimSuffix(path, ".json")
	}
	group := "attack summaries"
	if s.Dataset != "" {
		group += ", " + s.Dataset
	}
	r.addCleanScore("", group, row, s.Recipe, 100*s.Original, s.N)
	r.Scores = append(r.Scores, Score{Group: group, Metric: metricAccuracy, Row: row, Column: s.Recipe, Value: 100 * s.UnderAttack, N: s.N})
	return nil
}
