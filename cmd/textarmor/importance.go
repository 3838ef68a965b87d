package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
)

func runImportance(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("importance", "importance --model DIR [--top N] [--synonyms FILE] [--dataset NAME | --train FILE] [--json]", stderr)
	var df dataFlags
	df.register(fs, false)
	var path, synPath string
	var top, gapWords int
	var seed int64
	var asJSON bool
	fs.StringVar(&path, "model", "", "model directory of a masked (FLAT) model (required)")
	fs.IntVar(&top, "top", 20, "words to list at each end")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object: most, least (word, phi), summary statistics, phi_stats, synonym_gap, correlations")
	fs.StringVar(&synPath, "synonyms", "", "neighbour table for the synonym importance gap (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json; the gap is skipped when the default is missing)")
	fs.IntVar(&gapWords, "gap-words", 1000, "vocabulary words (with an in-vocabulary neighbour) sampled for the synonym importance gap")
	fs.Int64Var(&seed, "seed", 1, "seed of the synonym-gap word sample")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	if err := checkNumbers(numRule{top >= 1, "top", top, "at least 1"}, numRule{gapWords >= 1, "gap-words", gapWords, "at least 1"}); err != nil {
		return err
	}
	m, err := model.Load(path)
	if err != nil {
		return err
	}
	phi := m.Net.WordImportance()
	if phi == nil {
		return fmt.Errorf("%s has no word mask (train it with --defense flat)", path)
	}
	type wp struct {
		Word string  `json:"word"`
		Phi  float32 `json:"phi"`
	}
	words := m.Vocab.Words()
	var all []wp
	for id := 2; id < len(words); id++ { // skip <pad>, <unk>
		all = append(all, wp{words[id], phi[id]})
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].Phi > all[b].Phi })
	n := min(top, len(all))
	most := all[:n]
	least := make([]wp, n)
	for i := range least {
		least[i] = all[len(all)-1-i]
	}
	var mean float64
	for _, w := range all {
		mean += float64(w.Phi)
	}
	if len(all) > 0 {
		mean /= float64(len(all))
	}
	ps := explain.SummarizePhi(phi)

	// Diagnostics of spec §9.3: synonym importance gap and correlations.
	var notes []string
	var gap *explain.GapStats
	nb, synUsed, err := loadNeighborFile(synPath, df.Dir)
	switch {
	case err == nil:
		g := explain.SynonymGap(phi, m.Vocab, nb, gapWords, seed)
		g.Synonyms = synUsed
		if g.Pairs == 0 {
			notes = append(notes, fmt.Sprintf("synonym importance gap skipped: no vocabulary word has an in-vocabulary neighbour in %s", synUsed))
		} else {
			gap = &g
		}
	case synPath == "" && synUsed == "":
		// No data folder: the gap is an optional diagnostic.
		notes = append(notes, "synonym importance gap skipped: no neighbour table (give one with --synonyms FILE, or --data DIR)")
	case synPath == "" && errors.Is(err, os.ErrNotExist):
		notes = append(notes, fmt.Sprintf("synonym importance gap skipped: no neighbour table at %s (give one with --synonyms FILE)", synUsed))
	default:
		return err
	}
	corr, corrNotes, err := importanceCorrelations(m, phi, &df)
	if err != nil {
		return err
	}
	notes = append(notes, corrNotes...)

	if asJSON {
		out := map[string]any{"most": most, "least": least, "words": len(all),
			"mean_phi": mean, "median_phi": ps.Median, "share_phi_0.4_0.6": ps.Share04to06, "phi_stats": ps}
		if gap != nil {
			out["synonym_gap"] = gap
		}
		if corr != nil {
			out["correlations"] = corr
		}
		if len(notes) > 0 {
			out["notes"] = notes
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "%d words: mean φ %.4f, median φ %.4f, %.1f%% within (0.4, 0.6), %.1f%% > 0.9, %.1f%% < 0.1\n",
		len(all), mean, ps.Median, 100*ps.Share04to06, 100*ps.ShareAbove09, 100*ps.ShareBelow01)
	fmt.Fprintf(stdout, "\nmost important:\n")
	for _, w := range most {
		fmt.Fprintf(stdout, "  %-20s %.4f\n", w.Word, w.Phi)
	}
	fmt.Fprintf(stdout, "\nleast important:\n")
	for _, w := range least {
		fmt.Fprintf(stdout, "  %-20s %.4f\n", w.Word, w.Phi)
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
	if len(notes) > 0 {
		fmt.Fprintln(stdout)
		for _, s := range notes {
			fmt.Fprintf(stdout, "note: %s\n", s)
		}
	}
	return nil
}

// importanceCorrelations loads what the Table 9 correlations need: WF
// needs --dataset or --train, SF the model's substitution_counts training
// record. It returns nil and notes when neither is there.
func importanceCorrelations(m *model.Model, phi []float32, df *dataFlags) (*explain.Correlations, []string, error) {
	var notes []string
	var wf []float64
	source := ""
	if df.Preset != "" || df.Train != "" {
		ds, _, err := df.load()
		if err != nil {
			return nil, nil, err
		}
		if len(ds.Train) == 0 {
			return nil, nil, fmt.Errorf("dataset %s has no training split to count word frequencies on", ds.Name)
		}
		texts := make([]string, len(ds.Train))
		for i, e := range ds.Train {
			texts[i] = e.Text
		}
		wf = explain.WordFrequencies(m.Vocab, m.Tok, texts)
		source = fmt.Sprintf("%s train (%d texts, %s tokenizer)", ds.Name, len(ds.Train), m.Tokenizer)
	} else {
		notes = append(notes, "WF correlations skipped: no training data (give --dataset NAME or --train FILE)")
	}
	raw, ok := m.Training["substitution_counts"]
	sf, err := explain.SubstitutionFrequencies(m.Vocab, raw, ok)
	if err != nil {
		return nil, nil, err
	}
	if sf == nil {
		notes = append(notes, "SF correlations skipped: the model's training record has no substitution_counts (FLAT training records them)")
	}
	c := explain.ImportanceCorrelations(phi, wf, sf)
	if c != nil {
		c.WFSource = source
	}
	return c, notes, nil
}
