package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/pipeline"
)

func runEmbed(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "train" {
		return runEmbedTrain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "counterfit" {
		return runEmbedCounterfit(args[1:], stdout, stderr)
	}
	fs := newFlags("embed stats", "embed stats --model DIR [--synonyms PATH] [--json]", stderr)
	c := pipeline.NewEmbedStatsConfig()
	var asJSON bool
	fs.StringVar(&c.Model, "model", "", "model directory (required)")
	fs.StringVar(&c.Synonyms, "synonyms", "", "synonym neighbour table (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&c.Norm, "norm", c.Norm, "distance norm: 1, 2 or inf")
	fs.Float64Var(&c.Alpha, "alpha", c.Alpha, "margin for the share of random pairs within alpha (0 = the model's FTML/CML alpha, else 0.7·alpha0 of this table)")
	fs.IntVar(&c.Anchors, "anchors", c.Anchors, "use the this many most frequent words with synonyms as anchors (-1 = all)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed for the random word pairs")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object")
	switch {
	case len(args) > 0 && args[0] == "stats":
		args = args[1:]
	case len(args) == 0 || !strings.HasPrefix(args[0], "-"):
		return usageError{fmt.Errorf("want a subcommand: 'embed stats --model DIR', 'embed train --dataset NAME --out FILE' or 'embed counterfit --vectors FILE --out FILE'")}
	}
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	r, err := pipeline.EmbedStats(context.Background(), c)
	if err != nil {
		return err
	}
	st := r.Stats
	if asJSON {
		out := map[string]any{"model": c.Model, "synonyms": r.Synonyms, "alpha_source": r.AlphaSource, "stats": st}
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "model %s; synonyms %s: %d of %d words have synonyms\n", c.Model, r.Synonyms, r.WithSynonyms, r.VocabWords)
	fmt.Fprintf(stdout, "anchors %d, norm %s\n", st.Anchors, st.NormName)
	fmt.Fprintf(stdout, "mean synonym distance   %.4f\n", st.MeanSynonymDist)
	fmt.Fprintf(stdout, "mean random distance    %.4f\n", st.MeanRandomDist)
	fmt.Fprintf(stdout, "ratio synonym/random    %.4f\n", st.Ratio)
	fmt.Fprintf(stdout, "alpha0 (this table)     %.4f\n", st.Alpha0)
	fmt.Fprintf(stdout, "alpha                   %.4f (%s)\n", st.Alpha, r.AlphaSource)
	fmt.Fprintf(stdout, "random pairs < alpha    %.4f\n", st.ShareRandomCloserThanAlpha)
	fmt.Fprintf(stdout, "synonym pairs < alpha   %.4f\n", st.ShareSynonymCloserThanAlpha)
	return nil
}
