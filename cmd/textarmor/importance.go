package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/pipeline"
)

func runImportance(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("importance", "importance --model DIR [--top N] [--synonyms FILE] [--dataset NAME | --train FILE] [--json]", stderr)
	c := pipeline.NewImportanceConfig()
	df := dataFlags{c.Data}
	df.register(fs, false)
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "model directory of a masked (FLAT) model (required)")
	fs.IntVar(&c.Top, "top", c.Top, "words to list at each end")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object: most, least (word, phi), summary statistics, phi_stats, synonym_gap, correlations")
	fs.StringVar(&c.Synonyms, "synonyms", "", "neighbour table for the synonym importance gap (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json; the gap is skipped when the default is missing)")
	fs.IntVar(&c.GapWords, "gap-words", c.GapWords, "vocabulary words (with an in-vocabulary neighbour) sampled for the synonym importance gap")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed of the synonym-gap word sample")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data = df.Data
	r, err := pipeline.Importance(context.Background(), c)
	if err != nil {
		return err
	}
	ps, gap, corr := r.Phi, r.Gap, r.Correlations
	if asJSON {
		out := map[string]any{"most": r.Most, "least": r.Least, "words": r.Words,
			"mean_phi": r.MeanPhi, "median_phi": ps.Median, "share_phi_0.4_0.6": ps.Share04to06, "phi_stats": ps}
		if gap != nil {
			out["synonym_gap"] = gap
		}
		if corr != nil {
			out["correlations"] = corr
		}
		if len(r.Notes) > 0 {
			out["notes"] = r.Notes
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "%d words: mean φ %.4f, median φ %.4f, %.1f%% within (0.4, 0.6), %.1f%% > 0.9, %.1f%% < 0.1\n",
		r.Words, r.MeanPhi, ps.Median, 100*ps.Share04to06, 100*ps.ShareAbove09, 100*ps.ShareBelow01)
	for _, end := range []struct {
		name  string
		words []pipeline.WordPhi
	}{{"most", r.Most}, {"least", r.Least}} {
		fmt.Fprintf(stdout, "\n%s important:\n", end.name)
		for _, w := range end.words {
			fmt.Fprintf(stdout, "  %-20s %.4f\n", w.Word, w.Phi)
		}
	}
	if gap != nil {
		q := gap.Quartiles
		fmt.Fprintf(stdout, "\nsynonym importance gap |φ_w − φ_w'| (spec §9.3, Fig. 5): %d pairs from %d of %d words with in-vocabulary neighbours (seed %d, %s)\n",
			gap.Pairs, gap.SampledWords, gap.CandidateWords, gap.Seed, gap.Synonyms)
		fmt.Fprintf(stdout, "  mean %.4f  variance %.6f  min %.4f  q1 %.4f  median %.4f  q3 %.4f  max %.4f\n",
			gap.Mean, gap.Variance, q.Min, q.Q1, q.Median, q.Q3, q.Max)
		if gap.Deviation != "" {
			fmt.Fprintf(stdout, "  deviation: %s\n", gap.Deviation)
		}
	}
	if corr != nil {
		fmt.Fprintf(stdout, "\nPearson correlations over %d vocabulary words (spec Table 9):\n", corr.Words)
		for _, c := range []struct {
			name string
			r    *explain.Correlation
		}{{"WI–WF", corr.WIWF}, {"WI–SF", corr.WISF}, {"WF–SF", corr.WFSF}} {
			switch {
			case c.r == nil:
			case c.r.Error != "":
				fmt.Fprintf(stdout, "  %s  undefined: %s\n", c.name, c.r.Error)
			default:
				fmt.Fprintf(stdout, "  %s  r %+.4f  p %.3g\n", c.name, *c.r.R, *c.r.P)
			}
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(stdout)
		for _, s := range r.Notes {
			fmt.Fprintf(stdout, "note: %s\n", s)
		}
	}
	return nil
}
