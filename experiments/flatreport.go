package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
)

// pairedAA gives the FLAT row's after-attack accuracy minus another row's
// with the paired standard error over the test examples both attacked,
// from keptByIndex of the rows' result files. Both cells cover the first n
// test examples in file order (indices below n); a file may hold more (an
// attack run earlier for a larger --n), which is left out. It is "" when
// the cells' sizes differ or a file lacks some of their examples; the
// caller then keeps the unpaired SE.
func pairedAA(flat, other map[int]bool, nFLAT, nOther int) string {
	if nFLAT != nOther {
		return ""
	}
	p, ok := metrics.PairedOnFirst(flat, other, nFLAT)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (paired difference %+.1f ± %.1f SE, %d examples)", 100*p.Diff, 100*p.SE, nFLAT)
}

// FLATReport is a FLAT block as it stands: its markdown, the values of
// its cells ("ROW/COLUMN": sa, aa/ATTACK, kt/ATTACK.METHOD, ...) and the
// spec's checks 11–13 on them.
type FLATReport struct {
	Markdown string
	Values   map[string]float64 // the first instance's (one per seed: Seeds)
	Checks   []string
	// Claims are checks 11–13 with their verdicts over every instance;
	// Seeds each instance's values, in --seeds order.
	Claims []Claim
	Seeds  []map[string]float64
}

// report builds the block from the summaries present in every instance
// and writes table.md and table.json into the block's folder when write
// is set: one instance gives the single-seed table (reportOne), several
// each cell's mean ± SD [min–max] and the claims' verdicts over them.
func (ft *flatRun) report(write bool) (*FLATReport, error) {
	prev := ft.seed
	defer ft.use(prev)
	var insts []*flatInstance
	for _, s := range ft.seeds() {
		ft.use(s)
		one, js, err := ft.reportOne()
		if err != nil {
			return nil, err
		}
		in := &flatInstance{seed: s, values: one.Values, kept: map[string]map[int]bool{}, correct: map[string]map[int]bool{}, rep: one, js: js}
		for _, r := range ft.tableRows() {
			for _, a := range ft.attacks {
				k, n, err := ft.keptCell(r, a)
				if err != nil {
					return nil, err
				}
				if k != nil {
					in.kept[r+"/"+a] = firstN(k, n)
				}
				if _, done := in.correct[r]; !done && k != nil {
					// Every attack sees the same examples: the first file
					// gives which ones the model classifies correctly.
					c, err := correctByIndex(filepath.Join(ft.out, r, a+".csv"))
					if err != nil {
						return nil, err
					}
					in.correct[r] = firstN(c, n)
				}
			}
		}
		insts = append(insts, in)
	}
	claims := ft.claims(insts)
	var rep *FLATReport
	var js map[string]any
	if len(insts) == 1 {
		rep, js = insts[0].rep, insts[0].js
	} else {
		rep, js = ft.seedsReport(insts, claims)
	}
	rep.Claims = claims
	for _, in := range insts {
		rep.Seeds = append(rep.Seeds, in.values)
	}
	js["seeds"], js["train_seeds"], js["claims"], js["deviations"] = ft.seeds(), trainSeedList(flatTrainSeed, ft.seeds()), claims, ft.deviations()
	if !write {
		return rep, nil
	}
	return rep, ft.root.Publish(nil, rep.Markdown, js, false, false)
}

// correctByIndex reads an attack results file: for each example index,
// whether the model classified it correctly before the attack (any result
// but Skipped).
func correctByIndex(path string) (map[int]bool, error) {
	rs, _, err := attack.ReadCSV(path)
	if err != nil {
		return nil, err
	}
	out := make(map[int]bool, len(rs))
	for _, r := range rs {
		out[r.Index] = r.Type != attack.Skipped
	}
	return out, nil
}

// firstN keeps the examples 0..n-1 of a results map (a file may hold more,
// from a run with a larger --n); n = 0 keeps all.
func firstN(kept map[int]bool, n int) map[int]bool {
	if n == 0 {
		return kept
	}
	out := make(map[int]bool, n)
	for i, k := range kept {
		if i >= 0 && i < n {
			out[i] = k
		}
	}
	return out
}

// reportOne builds the current instance's table from the summaries
// present, with the spec's checks 11–13 where the cells for them are
// there, and the table.json object it would write.
func (ft *flatRun) reportOne() (*FLATReport, map[string]any, error) {
	var b strings.Builder
	ds := ft.dataset
	if ds == "" {
		ds = "files"
	}
	fmt.Fprintf(&b, "# FLAT Tables 2/3/8 — %s, %s, trained against %s\n\n", ds, ft.arch, ft.trainAttack)
	fmt.Fprintf(&b, "SA: clean accuracy on the attacked test examples (%s). AA: after-attack accuracy, protocol flat. KT / TI: Kendall's τ and top-5 intersection of the original/adversarial attributions. In brackets: the paper's value (spec flat.md §12; Table 3 and 8 values only for the attack the models were trained with).\n\n",
		map[bool]string{true: "the whole test set", false: fmt.Sprintf("the first %d", ft.n)}[ft.n == 0])
	if len(ft.trainArgs) > 0 {
		// They change what the rows are (vectors, the loss, the rounds).
		fmt.Fprintf(&b, "Train arguments of every row (each keeps those its defense takes): `%s`.\n\n", strings.Join(ft.trainArgs, " "))
	}
	b.WriteString("| model | SA |")
	for _, a := range ft.attacks {
		fmt.Fprintf(&b, " AA %s |", a)
		for _, m := range ft.methods {
			fmt.Fprintf(&b, " KT / TI %s, %s |", strings.ToUpper(m), a)
		}
	}
	b.WriteString("\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(ft.attacks)*(1+len(ft.methods))))
	b.WriteString("\n")
	type key struct{ row, col string }
	vals := map[key]float64{}
	var given []string
	rows := ft.tableRows()
	for _, r := range rows {
		label := map[string]string{"base": "base", "adv": "adv (" + ft.trainAttack + ")", "flat": "FLAT (" + ft.trainAttack + ")"}[r]
		var rec rowRecord
		if raw, err := os.ReadFile(filepath.Join(ft.out, r, "trained.json")); err == nil && json.Unmarshal(raw, &rec) == nil && rec.Used != "" {
			label += " ‡"
			given = append(given, fmt.Sprintf("‡ %s: model taken from %s (--use).", r, rec.Used))
		}
		fmt.Fprintf(&b, "| %s-%s |", strings.ToUpper(ft.arch), label)
		saKey := ft.arch + "/" + r
		if r != "base" {
			saKey += "/" + ft.trainAttack
		}
		sa := " — |"
		for _, a := range ft.attacks {
			if c, ok, err := ft.attackCell(r, a); err != nil {
				return nil, nil, err
			} else if ok {
				vals[key{r, "sa"}] = 100 * c.OriginalAccuracy
				sa = fmt.Sprintf(" %.1f%s |", 100*c.OriginalAccuracy, paperNote(flatPaper(flatPaperSA, saKey, ft.dataset, 1), 0, "%.2f"))
			}
		}
		b.WriteString(sa)
		for _, a := range ft.attacks {
			pk := a + "/" + ft.arch + "/" + r
			var ig, lime []float64
			if a == ft.trainAttack {
				ig, lime = flatPaper(flatPaperIG, pk, ft.dataset, 3), flatPaper(flatPaperLIME, pk, ft.dataset, 2)
			}
			aa := " — |"
			if c, ok, err := ft.attackCell(r, a); err != nil {
				return nil, nil, err
			} else if ok {
				vals[key{r, "aa/" + a}] = 100 * c.AfterAttack
				vals[key{r, "aa_se/" + a}] = 100 * metrics.BinomialSE(c.AfterAttack, c.N)
				vals[key{r, "n/" + a}] = float64(c.N)
				aa = fmt.Sprintf(" %.1f%s |", 100*c.AfterAttack, paperNote(ig, 0, "%.2f"))
			}
			b.WriteString(aa)
			for _, m := range ft.methods {
				c, ok, err := ft.readCell(r, a+"."+m)
				if err != nil {
					return nil, nil, err
				}
				if !ok {
					b.WriteString(" — |")
					continue
				}
				if c.Explain == nil || c.Explain.Pairs == 0 {
					b.WriteString(" no pairs |") // no successful attack: nothing to compare
					continue
				}
				vals[key{r, "kt/" + a + "." + m}], vals[key{r, "ti/" + a + "." + m}] = c.KendallTau, c.TopK
				vals[key{r, "pairs/" + a + "." + m}] = float64(c.Explain.Pairs)
				if c.KendallTauSE != nil && c.TopKSE != nil {
					vals[key{r, "kt_se/" + a + "." + m}], vals[key{r, "ti_se/" + a + "." + m}] = *c.KendallTauSE, *c.TopKSE
				}
				paper := ""
				if m == "ig" && ig != nil {
					paper = fmt.Sprintf(" (%.2f / %.2f)", ig[1], ig[2])
				} else if m == "lime" && lime != nil {
					paper = fmt.Sprintf(" (%.2f / %.2f)", lime[0], lime[1])
				}
				fmt.Fprintf(&b, " %.3f / %.3f%s |", c.KendallTau, c.TopK, paper)
			}
		}
		b.WriteString("\n")
	}
	if len(given) > 0 {
		b.WriteString("\n" + strings.Join(given, "\n") + "\n")
	}
	if slices.Contains(rows, "flat") {
		line, ps, err := flatMaskLine(filepath.Join(ft.out, "flat", "model"))
		if err != nil {
			return nil, nil, err
		}
		if line != "" {
			b.WriteString("\n" + line + "\n")
			vals[key{"flat", "phi_median"}], vals[key{"flat", "phi_above_0_9"}], vals[key{"flat", "phi_below_0_1"}] = ps.Median, ps.ShareAbove09, ps.ShareBelow01
		}
	}
	if sec, err := ft.roundsSection(); err != nil {
		return nil, nil, err
	} else if sec != "" {
		b.WriteString("\n" + sec)
	}
	// Spec checks 11–13 on the cells present.
	var checks []string
	has := func(r, col string) (float64, bool) { v, ok := vals[key{r, col}]; return v, ok }
	verdict := func(ok bool) string {
		if ok {
			return "holds"
		}
		return "fails"
	}
	// noise gives the difference of two cells with its standard error
	// (unpaired: √(SE₁² + SE₂²)) when both cells have one, so a reader can
	// tell an ordering from the noise of the attacked sample.
	noise := func(col, other string, digits int) string {
		f, okF := has("flat", col)
		o, okO := has(other, col)
		sf, okSF := has("flat", seCol(col))
		so, okSO := has(other, seCol(col))
		if !okF || !okO || !okSF || !okSO {
			return ""
		}
		return fmt.Sprintf(" (difference %+.*f ± %.*f SE)", digits, f-o, digits, math.Hypot(sf, so))
	}
	cells13 := map[string][2]int{} // per method: cells holding, cells compared
	for _, a := range ft.attacks {
		f, okF := has("flat", "aa/"+a)
		var flatKept map[int]bool
		if okF {
			var err error
			if flatKept, err = attack.KeptByIndex(filepath.Join(ft.out, "flat", a+".csv")); err != nil {
				return nil, nil, err
			}
		}
		for _, other := range []string{"base", "adv"} {
			if o, ok := has(other, "aa/"+a); ok && okF {
				diff := noise("aa/"+a, other, 1)
				otherKept, err := attack.KeptByIndex(filepath.Join(ft.out, other, a+".csv"))
				if err != nil {
					return nil, nil, err
				}
				nF, _ := has("flat", "n/"+a)
				nO, _ := has(other, "n/"+a)
				if p := pairedAA(flatKept, otherKept, int(nF), int(nO)); p != "" {
					diff = p
				}
				line := fmt.Sprintf("check 11, %s: AA(FLAT) %.1f > AA(%s) %.1f%s: %s", a, f, other, o, diff, verdict(f > o))
				if other == "adv" {
					// The spec asks for the strict order in most cells and
					// this weaker one in every cell.
					line += fmt.Sprintf("; AA(FLAT) ≥ AA(adv) − 1: %s", verdict(f >= o-1))
				}
				checks = append(checks, line)
			}
		}
		for _, m := range ft.methods {
			for _, what := range []string{"kt", "ti"} {
				col := what + "/" + a + "." + m
				f, okF := has("flat", col)
				compared, held := 0, true
				for _, other := range []string{"base", "adv"} {
					if o, ok := has(other, col); ok && okF {
						// The spec's check 13 is FLAT ≥ each baseline.
						compared++
						held = held && f >= o
						checks = append(checks, fmt.Sprintf("check 13, %s %s %s: FLAT %.3f ≥ %s %.3f%s: %s", strings.ToUpper(what), strings.ToUpper(m), a, f, other, o, noise(col, other, 3), verdict(f >= o)))
					}
				}
				// A cell counts only against both baselines, as the spec's
				// share of cells does across blocks.
				if compared == 2 {
					c := cells13[m]
					c[1]++
					if held {
						c[0]++
					}
					cells13[m] = c
				}
			}
		}
	}
	for _, m := range ft.methods {
		if c, ok := cells13[m]; ok {
			checks = append(checks, fmt.Sprintf("check 13 cells, %s: %d of %d KT/TI cells hold against both baselines (the spec asks for 90 %% of the cells over all blocks, IG on Table 3, LIME on Table 8)", strings.ToUpper(m), c[0], c[1]))
		}
	}
	if f, okF := has("flat", "sa"); okF {
		if o, ok := has("base", "sa"); ok {
			checks = append(checks, fmt.Sprintf("check 12: SA(FLAT) %.1f ≥ SA(base) %.1f − 2.5: %s", f, o, verdict(f >= o-2.5)))
		}
	}
	if len(checks) > 0 {
		b.WriteString("\n")
		for _, c := range checks {
			b.WriteString("- " + c + "\n")
		}
	}
	flat := map[string]float64{}
	for k, v := range vals {
		flat[k.row+"/"+k.col] = v
	}
	rep := &FLATReport{Markdown: b.String(), Values: flat, Checks: checks}
	js := map[string]any{"dataset": ds, "arch": ft.arch, "train_attack": ft.trainAttack,
		"attacks": ft.attacks, "explain": ft.methods, "n": ft.n, "values": flat, "checks": checks}
	return rep, js, nil
}

// keptCell reads which test examples a row's attack cell kept their label,
// with the cell's size; nil when the cell is not there.
func (ft *flatRun) keptCell(row, recipe string) (map[int]bool, int, error) {
	c, ok, err := ft.attackCell(row, recipe)
	if err != nil || !ok {
		return nil, 0, err
	}
	kept, err := attack.KeptByIndex(filepath.Join(ft.out, row, recipe+".csv"))
	return kept, c.N, err
}

// roundsTraining is what a row's model records of its rounds.
type roundsTraining struct {
	Config struct {
		Training struct {
			BestRound  *int `json:"best_round"`
			RoundStats []struct {
				Round      int     `json:"round"`
				BestDevAcc float64 `json:"best_dev_acc"`
			} `json:"round_stats"`
		} `json:"training"`
	} `json:"config"`
}

// roundsSection is the AA-by-round table of the adv and FLAT rows from
// the round cells there (--by-round), "" when there are none. The spec
// selects a row's model by dev accuracy (§4.1); this shows what that choice
// costs or gains in robustness.
func (ft *flatRun) roundsSection() (string, error) {
	type line struct {
		label, what string
		cells       map[int]string // round → cell
	}
	var lines []line
	maxRound := 0
	roundKept, roundN := map[string]map[int]bool{}, map[string]int{} // "ROW/roundR.ATTACK" → its results
	for _, row := range ft.tableRows() {
		if row == "base" {
			continue
		}
		rounds, err := ft.roundModels(row)
		if err != nil {
			return "", err
		}
		if len(rounds) == 0 {
			continue
		}
		var rec roundsTraining
		if raw, err := os.ReadFile(filepath.Join(ft.out, row, "model", "config.json")); err == nil {
			if err := json.Unmarshal(raw, &rec); err != nil {
				return "", fmt.Errorf("%s/model/config.json: %w", row, err)
			}
		}
		tr := rec.Config.Training
		label := fmt.Sprintf("%s-%s (%s)", strings.ToUpper(ft.arch), map[string]string{"adv": "adv", "flat": "FLAT"}[row], ft.trainAttack)
		dev := line{label, "best dev accuracy", map[int]string{}}
		for _, st := range tr.RoundStats {
			dev.cells[st.Round] = fmt.Sprintf("%.2f", 100*st.BestDevAcc)
		}
		sa := line{label, "SA", map[int]string{}}
		rowLines := []line{dev, sa}
		attacked := false
		for _, a := range ft.attacks {
			aa := line{label, "AA " + a, map[int]string{}}
			vsBase := line{label, "AA " + a + " − base (paired)", map[int]string{}}
			base, baseN, err := ft.keptCell("base", a)
			if err != nil {
				return "", err
			}
			for _, r := range rounds {
				name := fmt.Sprintf("round%d.%s", r, a)
				c, ok, err := ft.readCell(row, name)
				if err != nil {
					return "", err
				}
				if !ok {
					continue
				}
				attacked = true
				sa.cells[r] = fmt.Sprintf("%.1f", 100*c.OriginalAccuracy) // the same examples for every attack
				aa.cells[r] = fmt.Sprintf("%.1f ± %.1f", 100*c.AfterAttack, 100*metrics.BinomialSE(c.AfterAttack, c.N))
				if tr.BestRound != nil && *tr.BestRound == r {
					aa.cells[r] += " *"
				}
				kept, err := attack.KeptByIndex(filepath.Join(ft.out, row, name+".csv"))
				if err != nil {
					return "", err
				}
				roundKept[row+"/"+name], roundN[row+"/"+name] = kept, c.N
				if base != nil && baseN == c.N {
					if p, ok := metrics.PairedOnFirst(kept, base, c.N); ok {
						vsBase.cells[r] = fmt.Sprintf("%+.1f ± %.1f", 100*p.Diff, 100*p.SE)
					}
				}
			}
			rowLines = append(rowLines, aa)
			if len(vsBase.cells) > 0 {
				rowLines = append(rowLines, vsBase)
			}
		}
		if attacked || ft.byRound {
			lines = append(lines, rowLines...)
			maxRound = max(maxRound, rounds[len(rounds)-1])
		}
	}
	if len(lines) == 0 {
		return "", nil
	}
	// FLAT against adv round for round, on the same examples.
	for _, a := range ft.attacks {
		l := line{fmt.Sprintf("%s-FLAT − adv (%s)", strings.ToUpper(ft.arch), ft.trainAttack), "AA " + a + ", same round (paired)", map[int]string{}}
		for r := 1; r <= maxRound; r++ {
			name := fmt.Sprintf("round%d.%s", r, a)
			f, okF := roundKept["flat/"+name]
			o, okO := roundKept["adv/"+name]
			if !okF || !okO || roundN["flat/"+name] != roundN["adv/"+name] {
				continue
			}
			if p, ok := metrics.PairedOnFirst(f, o, roundN["flat/"+name]); ok {
				l.cells[r] = fmt.Sprintf("%+.1f ± %.1f", 100*p.Diff, 100*p.SE)
			}
		}
		if len(l.cells) > 0 {
			lines = append(lines, l)
		}
	}
	var b strings.Builder
	b.WriteString("By round (`--by-round`): each round's best-dev model, attacked on the same examples (SA: its clean accuracy there; AA ± its SE); * marks the round whose model the dev accuracy selected, the table's row.\n\n| model | |")
	for r := 1; r <= maxRound; r++ {
		fmt.Fprintf(&b, " round %d |", r)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", maxRound) + "\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "| %s | %s |", l.label, l.what)
		for r := 1; r <= maxRound; r++ {
			if c, ok := l.cells[r]; ok {
				fmt.Fprintf(&b, " %s |", c)
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// flatMaskLine summarises the FLAT row's inference-time word masks φ over
// its vocabulary, or "" while the row has no model yet. Masks near 1 for
// most words leave FLAT close to its unmasked encoder, which is worth
// knowing before reading its robustness (on long texts the spec's per-token
// mean of the entropy term is much weaker than the paper's sum).
func flatMaskLine(dir string) (string, explain.PhiStats, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return "", explain.PhiStats{}, nil
	}
	m, err := model.Load(dir)
	if err != nil {
		return "", explain.PhiStats{}, err
	}
	phi := m.Net.WordImportance()
	if phi == nil {
		return "", explain.PhiStats{}, fmt.Errorf("%s: the FLAT row's model has no word mask", dir)
	}
	ps := explain.SummarizePhi(phi)
	line := fmt.Sprintf("FLAT word masks (inference φ over %d vocabulary words): median %.3f; %.1f %% above 0.9, %.1f %% below 0.1, %.1f %% within (0.4, 0.6).",
		len(phi)-2, ps.Median, 100*ps.ShareAbove09, 100*ps.ShareBelow01, 100*ps.Share04to06)
	if ps.ShareAbove09 > 0.5 {
		line += " Most words pass almost unmasked, so FLAT stays close to its unmasked encoder (β and the entropy term's reduction decide how far φ is pulled towards 0.5; spec F4, docs/flat.md)."
	}
	return line, ps, nil
}

// paperNote formats the i-th paper value in brackets, or "" without one.
func paperNote(p []float64, i int, format string) string {
	if p == nil {
		return ""
	}
	return " (" + fmt.Sprintf(format, p[i]) + ")"
}

// seCol names the standard-error column of a value column ("kt/x" → "kt_se/x").
func seCol(col string) string {
	head, tail, _ := strings.Cut(col, "/")
	return head + "_se/" + tail
}
