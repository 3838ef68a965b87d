package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/textarmor/textarmor/attack"
)

// row is one attack result for a fixture CSV.
type row struct {
	orig, pert              string
	truth, origOut, pertOut int
	queries                 int
	typ                     attack.ResultType
	words, perturbed        int
}

// writeCSV writes an attack results file as attack.RunAll does (and its
// run record when recipe is set).
func writeCSV(t testing.TB, path, recipe, dataset string, rows []row) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(attack.Columns)
	for i, r := range rows {
		w.Write([]string{r.orig, r.pert, strconv.Itoa(r.origOut), strconv.Itoa(r.pertOut), strconv.Itoa(r.truth),
			strconv.Itoa(r.queries), string(r.typ), strconv.Itoa(i), "0.0100", strconv.Itoa(r.words), strconv.Itoa(r.perturbed),
			strconv.Itoa(r.queries + 1)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if recipe != "" {
		writeJSON(t, path+".run.json", map[string]string{"recipe": recipe, "dataset": dataset, "seed": "0"})
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(raw)+"\n")
}

func writeFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// someRows are a successful substitution, a successful split (TextBugger
// inserting a space), a failure and a skip.
func someRows() []row {
	return []row{
		{"a gripping , well-acted film", "a gripping , well-played film", 1, 1, 0, 40, attack.Successful, 5, 1},
		{"the plot is dull", "the plot is du ll", 0, 0, 1, 12, attack.Successful, 4, 1},
		{"fine", "fine", 1, 1, 1, 9, attack.Failed, 1, 0},
		{"wrong", "wrong", 1, 0, 0, 0, attack.Skipped, 1, 0},
	}
}

// writeCARLTable writes a carl-table table.json as experiments writes it
// (the fields the report reads, and others it ignores).
func writeCARLTable(t testing.TB, dir string) {
	pgd := func(eps, clean, under float64) map[string]any {
		return map[string]any{"attack": map[string]any{"eps": eps, "step": eps, "steps": 3}, "method": "pgd", "dataset": "sst2",
			"n": 500, "clean_accuracy": clean, "accuracy_under_attack": under, "drop_se": 0.01, "cosine": 0.9}
	}
	cell := func(clean, a, b float64) map[string]any {
		return map[string]any{"dev_accuracy": 84.6,
			"pgd":    map[string]any{"0.02": pgd(0.02, clean, a), "0.1": pgd(0.1, clean, b)},
			"word":   map[string]any{"pwws": map[string]any{"n": 100, "original_accuracy": 83, "accuracy_under_attack": 15}},
			"spread": map[string]any{"pair_cosine": 0.1, "pair_distance": 9}}
	}
	writeJSON(t, filepath.Join(dir, "table.json"), map[string]any{
		"checks": []string{"sst2: carl > freelb: tie"},
		"cells":  map[string]any{"sst2": map[string]any{"rar": cell(0.86, 0.83, 0.64), "plain": cell(0.866, 0.81, 0.55)}},
	})
}

func writeFTMLTable(t testing.TB, dir string) {
	cells := []map[string]any{}
	for _, d := range []string{"standard", "ftml"} {
		for _, c := range []struct {
			col string
			acc float64
			n   int
		}{{"clean", 85, 1000}, {"pwws", 20, 30}} {
			cells = append(cells, map[string]any{"defense": d, "column": c.col, "accuracy": c.acc, "n": c.n, "seconds": 1})
		}
	}
	writeJSON(t, filepath.Join(dir, "table.json"), map[string]any{"dataset": "imdb", "arch": "cnn", "quick": true, "n": 30,
		"clean_n": 1000, "train_n": 0, "seed": 0, "blas": "go", "cells": cells, "paper": nil, "checks": []string{}, "certified": nil})
}

func writeFLATTable(t testing.TB, dir string) {
	writeJSON(t, filepath.Join(dir, "table.json"), map[string]any{"dataset": "trec", "arch": "cnn", "train_attack": "textfooler",
		"attacks": []string{"textfooler"}, "explain": []string{"ig"}, "n": 60, "checks": []string{},
		"values": map[string]float64{"base/sa": 71.7, "base/aa/textfooler": 41.7, "base/n/textfooler": 60, "flat/sa": 95,
			"flat/aa/textfooler": 63.3, "flat/n/textfooler": 60, "flat/kt/textfooler.ig": 0.5}})
}

func writeSPGDTable(t testing.TB, dir string) {
	writeJSON(t, filepath.Join(dir, "table.json"), map[string]any{"accuracy": map[string]float64{"advt": 86.9, "spgd": 86.7},
		"gap": map[string]float64{"advt": 0.4}, "checks": []string{}, "grid": nil,
		"cells": map[string]any{"advt": map[string]any{"accuracy": 86.9, "n": 25000}, "spgd": map[string]any{"accuracy": 86.7, "n": 25000}}})
}

func writeRobustTable(t testing.TB, dir string) {
	writeJSON(t, filepath.Join(dir, "table.json"), map[string]any{"sts": map[string]any{"simcse": map[string]float64{"stsb": 81}},
		"advsts": map[string]any{"simcse": map[string]any{"pwws/stsb": map[string]any{"N": 100, "Skipped": 31, "ASR": 53.6}},
			"robustembed": map[string]any{"pwws/stsb": map[string]any{"N": 100, "Skipped": 30, "ASR": 40.1}}},
		"adv_n": 100})
}

// writeTrainLog writes epochs 1..n of a log, twice when restarted (an
// appended rerun).
func writeTrainLog(t testing.TB, path string, n int, restarted bool) {
	var s string
	runs := 1
	if restarted {
		runs = 2
	}
	for range runs {
		for e := 1; e <= n; e++ {
			s += fmt.Sprintf(`{"epoch":%d,"steps":10,"train_loss":%g,"train_acc":%g,"terms":{"ce":0.5},"dev_acc":%g,"lr":0.001,"seconds":1,"best":true}`+"\n",
				e, 1/float64(e), 0.5+0.1*float64(e), 0.6+0.05*float64(e))
		}
	}
	writeFile(t, path, s)
}

// writeAll lays out one of every input kind under dir.
func writeAll(t testing.TB, dir string) {
	writeCARLTable(t, filepath.Join(dir, "carl"))
	writeCSV(t, filepath.Join(dir, "carl", "sst2-rar", "pwws.csv"), "pwws", "sst2", someRows())
	writeTrainLog(t, filepath.Join(dir, "carl", "sst2-rar", "train.log.jsonl"), 3, false)
	writeFile(t, filepath.Join(dir, "carl", "sst2-rar", "model", "model.safetensors"), "not read")
	writeFile(t, filepath.Join(dir, "carl", "sst2-rar", "model", "config.json"), "{not json either")
	writeFTMLTable(t, filepath.Join(dir, "ftml"))
	writeFLATTable(t, filepath.Join(dir, "flat"))
	writeSPGDTable(t, filepath.Join(dir, "spgd"))
	writeRobustTable(t, filepath.Join(dir, "robust"))
	writeCSV(t, filepath.Join(dir, "runs", "cnn", "textfooler.csv"), "textfooler", "sst2", someRows())
	writeTrainLog(t, filepath.Join(dir, "runs", "cnn.log.jsonl"), 2, true)
	for _, e := range []struct{ eps, under float64 }{{0.05, 0.7}, {0.1, 0.5}} {
		writeJSON(t, filepath.Join(dir, "runs", "cnn-pgd", fmt.Sprintf("pgd-%g.json", e.eps)), map[string]any{
			"attack": map[string]any{"eps": e.eps, "step": e.eps, "steps": 3}, "method": "pgd", "dataset": "sst2", "n": 200,
			"clean_accuracy": 0.82, "accuracy_under_attack": e.under})
	}
	writeFile(t, filepath.Join(dir, "runs", "data.csv"), "text,label\nhello,1\n")
}
