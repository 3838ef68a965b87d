package experiments

import (
	"fmt"
	"math"

	"github.com/textarmor/textarmor/metrics"
)

// claims are FTML's Table 1/2 claims (spec check 11, as FTMLChecks) over
// the instances that hold the cells each needs: FTML loses at most 3.5
// points of clean accuracy to standard training, keeps ≥ 70 % under PWWS,
// GA and PSO, and is at least as accurate as every baseline in every
// attack column.
func (r *ftmlRun) claims(insts []*ftmlInstance) []Claim {
	arch := map[string]string{"cnn": "cnn", "bilstm": "lstm", "transformer": "bert"}[r.Arch]
	base := Claim{Paper: "FTML", Table: fmt.Sprintf("%s, IMDB, %s", r.tableName(), r.Arch)}
	key := func(d, c string) [2]string { return [2]string{d, c} }
	// cellsOf are the instances holding every key, with those cells.
	cellsOf := func(keys ...[2]string) (out [][]FTMLCell, kept [][]map[int]bool) {
		for _, in := range insts {
			var cs []FTMLCell
			var ks []map[int]bool
			for _, k := range keys {
				c, ok := in.cell[k]
				if !ok {
					cs = nil
					break
				}
				cs, ks = append(cs, c), append(ks, in.kept[k])
			}
			if cs != nil {
				out, kept = append(out, cs), append(kept, ks)
			}
		}
		return out, kept
	}
	column := func(cs [][]FTMLCell, i int) []float64 {
		var v []float64
		for _, c := range cs {
			v = append(v, c[i].Accuracy)
		}
		return v
	}
	paper := func(d, c string) (float64, bool) { return ftmlPaperCell(arch, d, c) }
	var out []Claim
	if cs, kept := cellsOf(key("ftml", "clean"), key("standard", "clean")); len(cs) > 0 {
		d, paired := ftmlEstimate(cs, kept, func(c []FTMLCell) (float64, float64) {
			f, s := c[0], c[1]
			return f.Accuracy - s.Accuracy, 100 * math.Hypot(metrics.BinomialSE(f.Accuracy/100, f.N), metrics.BinomialSE(s.Accuracy/100, s.N))
		}, pairedKept)
		pv := ""
		if f, ok := paper("ftml", "clean"); ok {
			s, _ := paper("standard", "clean")
			pv = fmt.Sprintf("FTML %.1f, standard %.1f", f, s)
		}
		out = append(out, newClaim(base, "clean: FTML ≥ standard − 3.5", pv,
			sideText("FTML", column(cs, 0), 1)+", "+sideText("standard", column(cs, 1), 1), shifted(d, 3.5), paired))
	}
	for _, a := range r.Attacks {
		var dev []string
		if a == "hla" {
			dev = []string{"HLA's Universal Sentence Encoder replaced by " + map[bool]string{true: "the MiniLM sentence embedding's", false: "mean word-vector"}[r.Arch == "transformer"] + " cosine (spec §14 A11)"}
		}
		b := base
		b.Deviations = dev
		if a == "pwws" || a == "ga" || a == "pso" {
			if cs, kept := cellsOf(key("ftml", a)); len(cs) > 0 {
				d, paired := ftmlEstimate(cs, kept, func(c []FTMLCell) (float64, float64) {
					return c[0].Accuracy - 70, 100 * metrics.BinomialSE(c[0].Accuracy/100, c[0].N)
				}, func(k [][]map[int]bool) (metrics.SeedEstimate, bool) {
					first := make([]map[int]bool, len(k))
					for i, one := range k {
						first[i] = one[0]
					}
					return metrics.KeptSeeds(first, 0.7)
				})
				pv := ""
				if p, ok := paper("ftml", a); ok {
					pv = fmt.Sprintf("FTML %.1f", p)
				}
				out = append(out, newClaim(b, a+": FTML ≥ 70", pv, sideText("FTML", column(cs, 0), 1), d, paired))
			}
		}
		for _, order := range r.archRecipes() {
			o := order.Defense
			if o == "ftml" || o == "standard" {
				continue
			}
			cs, kept := cellsOf(key("ftml", a), key(o, a))
			if len(cs) == 0 {
				continue
			}
			d, paired := ftmlEstimate(cs, kept, func(c []FTMLCell) (float64, float64) {
				f, x := c[0], c[1]
				return f.Accuracy - x.Accuracy, 100 * math.Hypot(metrics.BinomialSE(f.Accuracy/100, f.N), metrics.BinomialSE(x.Accuracy/100, x.N))
			}, pairedKept)
			pv := ""
			if pf, ok := paper("ftml", a); ok {
				if po, ok := paper(o, a); ok {
					pv = fmt.Sprintf("FTML %.1f, %s %.1f", pf, o, po)
				}
			}
			out = append(out, newClaim(b, fmt.Sprintf("%s: FTML ≥ %s", a, o), pv,
				sideText("FTML", column(cs, 0), 1)+", "+sideText(o, column(cs, 1), 1), d, paired))
		}
	}
	return out
}

// pairedKept is PairedSeeds on each instance's two kept maps (FTML's
// cell first).
func pairedKept(k [][]map[int]bool) (metrics.SeedEstimate, bool) {
	kf, ko := make([]map[int]bool, len(k)), make([]map[int]bool, len(k))
	for i, pair := range k {
		kf[i], ko[i] = pair[0], pair[1]
	}
	return metrics.PairedSeeds(kf, ko)
}

// ftmlEstimate is a claim's margin over the instances: from the
// per-example results (in proportions, scaled to points) when every
// instance has all of them, else from each instance's cell values and SE.
func ftmlEstimate(cs [][]FTMLCell, kept [][]map[int]bool, cell func([]FTMLCell) (float64, float64),
	perExample func([][]map[int]bool) (metrics.SeedEstimate, bool)) (metrics.SeedEstimate, bool) {
	all := len(kept) == len(cs)
	for _, k := range kept {
		for _, m := range k {
			all = all && m != nil
		}
	}
	if all {
		if e, ok := perExample(kept); ok {
			return scaled(e, 100), true
		}
	}
	var est, se []float64
	for _, c := range cs {
		e, s := cell(c)
		est, se = append(est, e), append(se, s)
	}
	return metrics.FromSeeds(est, se), false
}

// deviations are what the table's run changes from the paper's protocol.
func (r *ftmlRun) deviations() []string {
	var out []string
	if r.Quick {
		out = append(out, "quick run: recipes cut to a few epochs at batch 16, halved GA/PSO/HLA search budgets")
	}
	if r.TrainN > 0 && r.TrainN < len(r.ds.Train) {
		out = append(out, fmt.Sprintf("trained on a seeded %d of the %d training examples", r.TrainN, len(r.ds.Train)))
	}
	if r.N != 1000 {
		out = append(out, fmt.Sprintf("%d attacked test examples (paper 1,000)", r.N))
	}
	if r.CleanN > 0 && r.CleanN < len(r.ds.Test) {
		out = append(out, fmt.Sprintf("clean accuracy on %d seeded test examples (paper: all %d)", r.CleanN, len(r.ds.Test)))
	}
	if r.Embeddings == "" && r.Arch != "transformer" {
		out = append(out, "random initial word vectors (paper: GloVe 300-d)")
	}
	if r.Arch == "transformer" {
		out = append(out, "fine-tuned from "+baseName(r.init())+" (paper: BERT-base)")
	}
	for _, d := range r.Defenses {
		rc := r.recipes[d]
		if rc.Reference > 0 {
			out = append(out, fmt.Sprintf("%s trained %d epochs (recipe %d)", d, rc.Epochs, rc.Reference))
		}
		if rc.Tuned != "" {
			out = append(out, fmt.Sprintf("%s recipe changed: %s", d, rc.Tuned))
		}
	}
	return out
}
