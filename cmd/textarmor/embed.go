package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
)

func runEmbed(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "train" {
		return runEmbedTrain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "counterfit" {
		return runEmbedCounterfit(args[1:], stdout, stderr)
	}
	fs := newFlags("embed stats", "embed stats --model DIR [--synonyms PATH] [--json]", stderr)
	var modelDir, synPath, dataDir, norm string
	var alpha float64
	var anchors int
	var seed int64
	var asJSON bool
	fs.StringVar(&modelDir, "model", "", "model directory (required)")
	fs.StringVar(&synPath, "synonyms", "", "synonym neighbour table (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.StringVar(&dataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&norm, "norm", "2", "distance norm: 1, 2 or inf")
	fs.Float64Var(&alpha, "alpha", 0, "margin for the share of random pairs within alpha (0 = the model's FTML/CML alpha, else 0.7·alpha0 of this table)")
	fs.IntVar(&anchors, "anchors", 5000, "use the this many most frequent words with synonyms as anchors (-1 = all)")
	fs.Int64Var(&seed, "seed", 1, "seed for the random word pairs")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object")
	switch {
	case len(args) > 0 && args[0] == "stats":
		args = args[1:]
	case len(args) == 0 || !strings.HasPrefix(args[0], "-"):
		return usageError{fmt.Errorf("want a subcommand: 'embed stats --model DIR', 'embed train --dataset NAME --out FILE' or 'embed counterfit --vectors FILE --out FILE'")}
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkNumbers(
		numRule{finite(alpha) && alpha >= 0, "alpha", alpha, "a number ≥ 0 (0 = the model's FTML/CML alpha or 0.7·alpha0)"},
		numRule{anchors == -1 || anchors >= 1, "anchors", anchors, "at least 1, or -1 = all"},
	); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if modelDir == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	p, err := parseNorm(norm)
	if err != nil {
		return err
	}
	m, err := model.Load(modelDir)
	if err != nil {
		return err
	}
	syn, path, err := loadSynonyms(synPath, dataDir, m.Vocab, 8)
	if err != nil {
		return err
	}
	alphaSrc := "given"
	if alpha == 0 {
		alpha, alphaSrc = recordedAlpha(m)
	}
	st := defense.EmbedStatsWith(m.Net.Emb.W.Value, m.Vocab, syn, rand.New(rand.NewSource(seed)),
		defense.StatsOptions{P: p, Alpha: alpha, MaxAnchors: anchors})
	if alpha == 0 {
		alphaSrc = "0.7·alpha0 of this table"
	}
	if asJSON {
		out := map[string]any{"model": modelDir, "synonyms": path, "alpha_source": alphaSrc, "stats": st}
		return json.NewEncoder(stdout).Encode(out)
	}
	with, total := syn.Coverage()
	fmt.Fprintf(stdout, "model %s; synonyms %s: %d of %d words have synonyms\n", modelDir, path, with, total)
	fmt.Fprintf(stdout, "anchors %d, norm %s\n", st.Anchors, st.NormName)
	fmt.Fprintf(stdout, "mean synonym distance   %.4f\n", st.MeanSynonymDist)
	fmt.Fprintf(stdout, "mean random distance    %.4f\n", st.MeanRandomDist)
	fmt.Fprintf(stdout, "ratio synonym/random    %.4f\n", st.Ratio)
	fmt.Fprintf(stdout, "alpha0 (this table)     %.4f\n", st.Alpha0)
	fmt.Fprintf(stdout, "alpha                   %.4f (%s)\n", st.Alpha, alphaSrc)
	fmt.Fprintf(stdout, "random pairs < alpha    %.4f\n", st.ShareRandomCloserThanAlpha)
	fmt.Fprintf(stdout, "synonym pairs < alpha   %.4f\n", st.ShareSynonymCloserThanAlpha)
	return nil
}

// recordedAlpha is the margin an FTML/CML model was trained with, from its
// training record (0 when there is none).
func recordedAlpha(m *model.Model) (float64, string) {
	for _, name := range []string{"ftml", "cml"} {
		if rec, ok := m.Training[name].(map[string]any); ok {
			if a, ok := rec["alpha"].(float64); ok && a > 0 {
				return a, "the model's " + name + " training record"
			}
		}
	}
	return 0, ""
}
