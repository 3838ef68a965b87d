package experiments

import "path/filepath"

// flatCell is what the table reads from one attack run's JSON summary.
type flatCell struct {
	OriginalAccuracy float64 `json:"original_accuracy"`
	AfterAttack      float64 `json:"accuracy_under_attack"`
	N                int     `json:"n"`
	KendallTau       float64 `json:"kendall_tau"`
	TopK             float64 `json:"topk_intersection"`
	// The agreement's standard errors; absent (nil) in summaries written
	// before they were. AA's is derived from AA and N.
	KendallTauSE *float64 `json:"kendall_tau_se"`
	TopKSE       *float64 `json:"topk_intersection_se"`
	Explain      *struct {
		Pairs int `json:"pairs"`
	} `json:"explain"`
}

// cellFresh reports whether an attack summary exists for this run's N. A
// file from an earlier run with another N is stale: the attack resumes
// from its CSV (the first N of the same file order) and the file is
// rewritten. Files written before bench_n was recorded count when they
// cover N examples, or whenever the whole test set is asked for.
func (ft *flatRun) cellFresh(path string) (bool, error) {
	var c struct {
		N      int  `json:"n"`
		BenchN *int `json:"bench_n"`
	}
	ok, err := readJSON(path, &c)
	if err != nil || !ok {
		return false, err
	}
	fresh := (c.BenchN != nil && *c.BenchN == ft.n) || (c.BenchN == nil && (ft.n == 0 || c.N == ft.n))
	if !fresh {
		ft.t.logf("%s covers %d examples, not this run's --n %d: recomputing", path, c.N, ft.n)
	}
	return fresh, nil
}

// readCell reads one attack summary; ok is false when it is not there yet.
func (ft *flatRun) readCell(row, name string) (flatCell, bool, error) {
	var c flatCell
	ok, err := readJSON(filepath.Join(ft.out, row, name+".json"), &c)
	return c, ok, err
}

// attackCell returns any summary of a row's attack with one recipe (every
// method's run shares the attack, so they agree on SA and AA), whichever
// explain methods this run asks for.
func (ft *flatRun) attackCell(row, recipe string) (flatCell, bool, error) {
	for _, m := range []string{"", "ig", "lime"} {
		name := recipe
		if m != "" {
			name += "." + m
		}
		if c, ok, err := ft.readCell(row, name); err != nil || ok {
			return c, ok, err
		}
	}
	return flatCell{}, false, nil
}
