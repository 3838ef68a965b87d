package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
)

// Table is the resumable engine under the paper-table reproductions: a
// folder with one sub-folder per row (its model, training log, records
// and cells) and table.md / table.json beside them. Every unit of work is
// a file: a row's record says how its model was made, a cell is one JSON
// file, an attack's per-example results one CSV; a rerun skips what is
// there and refuses what another configuration made.
type Table struct {
	// Dir is the table's folder.
	Dir string
	// Log receives progress messages (nil: discarded).
	Log io.Writer
	// Name prefixes the messages ("ftml-table", "flat-table").
	Name string
}

func (t *Table) logf(format string, args ...any) {
	if t.Log != nil {
		fmt.Fprintf(t.Log, t.Name+": "+format+"\n", args...)
	}
}

// RowDir is the folder of a row.
func (t *Table) RowDir(row string) string { return filepath.Join(t.Dir, row) }

// Path is the path of a file in a row's folder.
func (t *Table) Path(row, name string) string { return filepath.Join(t.Dir, row, name) }

// WithRow runs f holding the row's lock: runs on different rows may share
// the folder (one per core), never two on one row.
func (t *Table) WithRow(row string, f func() error) error {
	unlock, err := checkpoint.LockDir(t.RowDir(row))
	if err != nil {
		return fmt.Errorf("%s: %w", row, err)
	}
	defer unlock()
	return f()
}

// ReadJSON reads a row's JSON file into v; ok is false when it is absent.
func (t *Table) ReadJSON(row, name string, v any) (ok bool, err error) {
	return readJSON(t.Path(row, name), v)
}

func readJSON(path string, v any) (bool, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w (delete it to recompute it)", path, err)
	}
	return true, nil
}

// WriteJSON writes v, indented, to a row's file atomically.
func (t *Table) WriteJSON(row, name string, v any) error {
	return WriteJSON(t.Path(row, name), v)
}

// WriteJSON writes v, indented, to path atomically.
func WriteJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return checkpoint.WriteFileAtomic(path, append(raw, '\n'), 0o644)
}

// Kept reads a row's attack results file NAME.csv: for each example index,
// whether the example kept its label (result Failed). A missing file
// gives nil.
func (t *Table) Kept(row, name string) (map[int]bool, error) {
	return attack.KeptByIndex(t.Path(row, name+".csv"))
}

// ClaimCells records which model the cells BASE.csv and BASE*.json of a
// row are attacks on (BASE.model: its weights digest), and refuses cells
// made on other weights: a resumed attack must not mix two models'
// results, nor a finished summary stand for a model it was not made on.
// Cells from before the record was kept are taken as they are.
func ClaimCells(base, modelDir string) error {
	digest, err := checkpoint.WeightsDigest(modelDir)
	if err != nil {
		return err
	}
	record := base + ".model"
	prev, err := os.ReadFile(record)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return checkpoint.WriteFileAtomic(record, []byte(digest+"\n"), 0o644)
	case err != nil:
		return err
	}
	if got := strings.TrimSpace(string(prev)); got != digest {
		return fmt.Errorf("%s.csv and its summaries are attacks on other weights (%.12s…) than %s has now (%.12s…): remove %s.* to attack it afresh",
			base, got, modelDir, digest, base)
	}
	return nil
}

// Publish writes the table's markdown and JSON atomically (report: prints
// the markdown only, writing nothing, safe beside a running table) and
// prints the markdown to w when print is set.
func (t *Table) Publish(w io.Writer, markdown string, js any, report, print bool) error {
	if report {
		_, err := fmt.Fprint(w, markdown)
		return err
	}
	if err := checkpoint.WriteFileAtomic(filepath.Join(t.Dir, "table.md"), []byte(markdown), 0o644); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(t.Dir, "table.json"), js); err != nil {
		return err
	}
	if print {
		_, err := fmt.Fprint(w, markdown)
		return err
	}
	return nil
}

// OrderVerdict judges the claim diff > 0 given its standard error: it
// holds beyond two SE, fails beyond two SE the other way, and is a tie
// otherwise (the project's rule for every claimed ordering).
func OrderVerdict(diff, se float64) string {
	switch {
	case diff > 2*se:
		return "holds"
	case diff < -2*se:
		return "fails"
	}
	return "tie"
}

// WithinVerdict judges the claim |diff| ≤ bound: it holds when even two
// SE away |diff| stays within the bound, fails when even two SE closer it
// exceeds it, and is a tie otherwise.
func WithinVerdict(diff, se, bound float64) string {
	switch d := math.Abs(diff); {
	case d+2*se <= bound:
		return "holds"
	case d-2*se > bound:
		return "fails"
	}
	return "tie"
}

// Verdict words the outcome of a check that has no standard error (a
// measured value against a fixed target with no sampling noise of its
// own): holds or fails.
func Verdict(ok bool) string {
	if ok {
		return "holds"
	}
	return "fails"
}

// Instance is the table of a trained instance (--seeds): the table itself
// for offset 0, so that a single-seed folder is instance 0 of a
// multi-seed one, and its sub-folder seed-K for offset K.
func (t *Table) Instance(seed int64) *Table {
	if seed == 0 {
		return t
	}
	return &Table{Dir: filepath.Join(t.Dir, fmt.Sprintf("seed-%d", seed)), Log: t.Log, Name: fmt.Sprintf("%s seed %d", t.Name, seed)}
}

// CheckSeeds validates instance offsets: non-negative and distinct.
func CheckSeeds(seeds []int64) error {
	seen := map[int64]bool{}
	for _, s := range seeds {
		switch {
		case s < 0:
			return fmt.Errorf("--seeds: %d is negative (offsets from the recipe's training seed, 0 = the single-seed table's)", s)
		case seen[s]:
			return fmt.Errorf("--seeds: %d is given twice", s)
		}
		seen[s] = true
	}
	return nil
}

// SeedsOrZero is seeds, or the single instance {0} when there are none.
func SeedsOrZero(seeds []int64) []int64 {
	if len(seeds) == 0 {
		return []int64{0}
	}
	return seeds
}
