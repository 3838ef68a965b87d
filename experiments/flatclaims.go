package experiments

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/metrics"
)

// flatTrainSeed is the rows' training seed (train's default); instance k
// trains with flatTrainSeed + k.
const flatTrainSeed = 1

// flatInstance is what one trained instance (seed) of a block holds.
type flatInstance struct {
	seed   int64
	values map[string]float64
	// kept: "ROW/ATTACK" → which of the cell's examples kept their label;
	// correct: "ROW" → which of them the model classified correctly.
	kept, correct map[string]map[int]bool
	rep           *FLATReport
	js            map[string]any
}

// claims are FLAT's checks 11–13 on a block over the instances that hold
// the cells each needs, every one as an ordering judged beyond two SE:
// FLAT's AA above base's and adv's, and at least adv's − 1 (check 11,
// paired over the test examples when the result files are there); SA(FLAT)
// ≥ SA(base) − 2.5 (check 12, paired per example from the same files);
// FLAT's KT and TI at least each baseline's (check 13).
func (ft *flatRun) claims(insts []*flatInstance) []Claim {
	ds := ft.dataset
	if ds == "" {
		ds = "files"
	}
	base := Claim{Paper: "FLAT", Table: fmt.Sprintf("Tables 2/3/8, %s, %s, trained against %s", ds, ft.arch, ft.trainAttack)}
	// have are the instances holding every value named.
	have := func(cols ...string) []*flatInstance {
		var out []*flatInstance
	outer:
		for _, in := range insts {
			for _, c := range cols {
				if _, ok := in.values[c]; !ok {
					continue outer
				}
			}
			out = append(out, in)
		}
		return out
	}
	vals := func(ins []*flatInstance, col string) []float64 {
		var v []float64
		for _, in := range ins {
			v = append(v, in.values[col])
		}
		return v
	}
	saKey := func(r string) string {
		if r == "base" {
			return ft.arch + "/base"
		}
		return ft.arch + "/" + r + "/" + ft.trainAttack
	}
	var out []Claim
	for _, a := range ft.attacks {
		for _, other := range []string{"base", "adv"} {
			ins := have("flat/aa/"+a, other+"/aa/"+a)
			if len(ins) == 0 {
				continue
			}
			pv := ""
			if a == ft.trainAttack {
				f := flatPaper(flatPaperIG, a+"/"+ft.arch+"/flat", ft.dataset, 3)
				o := flatPaper(flatPaperIG, a+"/"+ft.arch+"/"+other, ft.dataset, 3)
				if f != nil && o != nil {
					pv = fmt.Sprintf("FLAT %.2f, %s %.2f", f[0], other, o[0])
				}
			}
			ours := sideText("FLAT", vals(ins, "flat/aa/"+a), 1) + ", " + sideText(other, vals(ins, other+"/aa/"+a), 1)
			d, paired := flatAAMargin(ins, a, other)
			out = append(out, newClaim(base, fmt.Sprintf("check 11, %s: AA(FLAT) > AA(%s)", a, other), pv, ours, d, paired))
			if other == "adv" {
				out = append(out, newClaim(base, fmt.Sprintf("check 11, %s: AA(FLAT) ≥ AA(adv) − 1", a), pv, ours, shifted(d, 1), paired))
			}
		}
		for _, m := range ft.methods {
			for _, what := range []string{"kt", "ti"} {
				col := what + "/" + a + "." + m
				for _, other := range []string{"base", "adv"} {
					ins := have("flat/"+col, other+"/"+col)
					if len(ins) == 0 {
						continue
					}
					var est, se []float64
					for _, in := range ins {
						est = append(est, in.values["flat/"+col]-in.values[other+"/"+col])
						se = append(se, math.Hypot(in.values["flat/"+seCol(col)], in.values[other+"/"+seCol(col)]))
					}
					pv := ""
					if a == ft.trainAttack {
						i, table, size := 1, flatPaperIG, 3
						if m == "lime" {
							i, table, size = 0, flatPaperLIME, 2
						}
						if what == "ti" {
							i++
						}
						f := flatPaper(table, a+"/"+ft.arch+"/flat", ft.dataset, size)
						o := flatPaper(table, a+"/"+ft.arch+"/"+other, ft.dataset, size)
						if f != nil && o != nil {
							pv = fmt.Sprintf("FLAT %.2f, %s %.2f", f[i], other, o[i])
						}
					}
					ours := sideText("FLAT", vals(ins, "flat/"+col), 3) + ", " + sideText(other, vals(ins, other+"/"+col), 3)
					out = append(out, newClaim(base, fmt.Sprintf("check 13, %s %s %s: FLAT ≥ %s", strings.ToUpper(what), strings.ToUpper(m), a, other),
						pv, ours, metrics.FromSeeds(est, se), false))
				}
			}
		}
	}
	if ins := have("flat/sa", "base/sa"); len(ins) > 0 {
		var est, se []float64
		var cf, cb []map[int]bool
		for _, in := range ins {
			f, b := in.values["flat/sa"], in.values["base/sa"]
			n := int(in.values["flat/n/"+ft.attacks[0]])
			est = append(est, f-b+2.5)
			se = append(se, 100*math.Hypot(metrics.BinomialSE(f/100, n), metrics.BinomialSE(b/100, n)))
			if in.correct["flat"] != nil && in.correct["base"] != nil {
				cf, cb = append(cf, in.correct["flat"]), append(cb, in.correct["base"])
			}
		}
		d, paired := metrics.FromSeeds(est, se), false
		// Both rows classify the same examples: paired per example.
		if len(cf) == len(ins) {
			if p, ok := metrics.PairedSeeds(cf, cb); ok {
				d, paired = shifted(scaled(p, 100), 2.5), true
			}
		}
		pv := ""
		f := flatPaper(flatPaperSA, saKey("flat"), ft.dataset, 1)
		b := flatPaper(flatPaperSA, saKey("base"), ft.dataset, 1)
		if f != nil && b != nil {
			pv = fmt.Sprintf("FLAT %.2f, base %.2f", f[0], b[0])
		}
		out = append(out, newClaim(base, "check 12: SA(FLAT) ≥ SA(base) − 2.5", pv,
			sideText("FLAT", vals(ins, "flat/sa"), 1)+", "+sideText("base", vals(ins, "base/sa"), 1), d, paired))
	}
	return out
}

// flatAAMargin is AA(FLAT) − AA(other) in points over the instances:
// paired over the examples every instance's two cells hold when the
// result files are all there, else from the cells' binomial SEs.
func flatAAMargin(ins []*flatInstance, a, other string) (metrics.SeedEstimate, bool) {
	var kf, ko []map[int]bool
	for _, in := range ins {
		f, okF := in.kept["flat/"+a]
		o, okO := in.kept[other+"/"+a]
		if !okF || !okO || in.values["flat/n/"+a] != in.values[other+"/n/"+a] {
			kf = nil
			break
		}
		kf, ko = append(kf, f), append(ko, o)
	}
	if len(kf) == len(ins) {
		if p, ok := metrics.PairedSeeds(kf, ko); ok {
			return scaled(p, 100), true
		}
	}
	var est, se []float64
	for _, in := range ins {
		est = append(est, in.values["flat/aa/"+a]-in.values[other+"/aa/"+a])
		se = append(se, math.Hypot(in.values["flat/aa_se/"+a], in.values[other+"/aa_se/"+a]))
	}
	return metrics.FromSeeds(est, se), false
}

// seedsReport is the block over several instances: each cell's mean ± SD
// [min–max] and the claims.
func (ft *flatRun) seedsReport(insts []*flatInstance, claims []Claim) (*FLATReport, map[string]any) {
	var b strings.Builder
	ds := ft.dataset
	if ds == "" {
		ds = "files"
	}
	fmt.Fprintf(&b, "# FLAT Tables 2/3/8 — %s, %s, trained against %s\n\n", ds, ft.arch, ft.trainAttack)
	fmt.Fprintf(&b, "Every row trained %d times (training seeds %s), each instance attacked on %s: mean ± SD across the instances [min–max]; a cell some instances lack yet says how many it covers. "+
		"SA: clean accuracy on the attacked test examples. AA: after-attack accuracy, protocol flat. KT / TI: Kendall's τ and top-5 intersection of the original/adversarial attributions. In brackets: the paper's value.\n\n",
		len(insts), trainSeeds(flatTrainSeed, ft.seeds()), map[bool]string{true: "the whole test set", false: fmt.Sprintf("the first %d test examples", ft.n)}[ft.n == 0])
	if len(ft.trainArgs) > 0 {
		fmt.Fprintf(&b, "Train arguments of every row (each keeps those its defense takes): `%s`.\n\n", strings.Join(ft.trainArgs, " "))
	}
	type col struct{ key, head, paperTable string }
	cols := []col{{"sa", "SA", ""}}
	for _, a := range ft.attacks {
		cols = append(cols, col{"aa/" + a, "AA " + a, ""})
		for _, m := range ft.methods {
			cols = append(cols, col{"kt/" + a + "." + m, "KT " + strings.ToUpper(m) + ", " + a, ""}, col{"ti/" + a + "." + m, "TI " + strings.ToUpper(m) + ", " + a, ""})
		}
	}
	b.WriteString("| model |")
	for _, c := range cols {
		b.WriteString(" " + c.head + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	cells := map[string]metrics.Across{}
	for _, r := range FLATRows {
		var any bool
		for _, in := range insts {
			for k := range in.values {
				any = any || strings.HasPrefix(k, r+"/")
			}
		}
		if !any {
			continue
		}
		label := map[string]string{"base": "base", "adv": "adv (" + ft.trainAttack + ")", "flat": "FLAT (" + ft.trainAttack + ")"}[r]
		fmt.Fprintf(&b, "| %s-%s |", strings.ToUpper(ft.arch), label)
		for _, c := range cols {
			var v []float64
			for _, in := range insts {
				if x, ok := in.values[r+"/"+c.key]; ok {
					v = append(v, x)
				}
			}
			if len(v) == 0 {
				b.WriteString(" — |")
				continue
			}
			a := metrics.AcrossSeeds(v)
			cells[r+"/"+c.key] = a
			prec := 1
			if c.key != "sa" && !strings.HasPrefix(c.key, "aa/") {
				prec = 3
			}
			cover := ""
			if len(v) < len(insts) {
				cover = fmt.Sprintf(" (%d of %d seeds)", len(v), len(insts))
			}
			fmt.Fprintf(&b, " %s%s%s |", FormatAcross(a, prec), ft.paperOf(r, c.key), cover)
		}
		b.WriteString("\n")
	}
	var checks []string
	for _, c := range claims {
		checks = append(checks, c.Line())
	}
	if len(checks) > 0 {
		b.WriteString("\n")
		for _, c := range checks {
			b.WriteString("- " + c + "\n")
		}
	}
	rep := &FLATReport{Markdown: b.String(), Values: insts[0].values, Checks: checks}
	js := map[string]any{"dataset": ds, "arch": ft.arch, "train_attack": ft.trainAttack,
		"attacks": ft.attacks, "explain": ft.methods, "n": ft.n, "values": insts[0].values, "checks": checks, "seed_cells": cells}
	return rep, js
}

// paperOf is the paper's value of a row's cell in brackets, or "".
func (ft *flatRun) paperOf(row, key string) string {
	head, tail, _ := strings.Cut(key, "/")
	if head == "sa" {
		k := ft.arch + "/" + row
		if row != "base" {
			k += "/" + ft.trainAttack
		}
		return paperNote(flatPaper(flatPaperSA, k, ft.dataset, 1), 0, "%.2f")
	}
	a, m, _ := strings.Cut(tail, ".")
	if a != ft.trainAttack {
		return ""
	}
	pk := a + "/" + ft.arch + "/" + row
	switch {
	case head == "aa":
		return paperNote(flatPaper(flatPaperIG, pk, ft.dataset, 3), 0, "%.2f")
	case m == "ig":
		return paperNote(flatPaper(flatPaperIG, pk, ft.dataset, 3), map[string]int{"kt": 1, "ti": 2}[head], "%.2f")
	case m == "lime":
		return paperNote(flatPaper(flatPaperLIME, pk, ft.dataset, 2), map[string]int{"kt": 0, "ti": 1}[head], "%.2f")
	}
	return ""
}

// deviations are what the block's run changes from the paper's protocol.
func (ft *flatRun) deviations() []string {
	var out []string
	if full := FLATAttackN(ft.dataset, -1); ft.n != full {
		out = append(out, fmt.Sprintf("attacked the first %d test examples (protocol: %s)", ft.n,
			map[bool]string{true: "the whole test set", false: fmt.Sprintf("the first %d", full)}[full == 0]))
	}
	if len(ft.trainArgs) > 0 {
		out = append(out, "train arguments of every row: "+strings.Join(ft.trainArgs, " "))
	}
	if ft.FlatLR != 0.005 {
		out = append(out, fmt.Sprintf("FLAT trained at lr %g (spec 0.005; F16 allows tuning)", ft.FlatLR))
	}
	for _, r := range slices.Sorted(maps.Keys(ft.Use)) {
		out = append(out, fmt.Sprintf("%s row's model taken from %s", r, ft.Use[r]))
	}
	return out
}
