package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/textarmor/textarmor/model"
)

func runImportance(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("importance", "importance --model DIR [--top N] [--json]", stderr)
	var path string
	var top int
	var asJSON bool
	fs.StringVar(&path, "model", "", "model directory of a masked (FLAT) model (required)")
	fs.IntVar(&top, "top", 20, "words to list at each end")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object: most, least (word, phi) and summary statistics")
	if err := parse(fs, args); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	if top < 1 {
		return usageError{fmt.Errorf("--top %d must be positive", top)}
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
	near := 0
	for _, w := range all {
		mean += float64(w.Phi)
		if w.Phi > 0.4 && w.Phi < 0.6 {
			near++
		}
	}
	if len(all) > 0 {
		mean /= float64(len(all))
	}
	median := float32(0)
	if len(all) > 0 {
		median = all[len(all)/2].Phi
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"most": most, "least": least, "words": len(all),
			"mean_phi": mean, "median_phi": median, "share_phi_0.4_0.6": float64(near) / float64(max(len(all), 1))})
	}
	fmt.Fprintf(stdout, "%d words: mean φ %.4f, median φ %.4f, %.1f%% within (0.4, 0.6)\n", len(all), mean, median,
		100*float64(near)/float64(max(len(all), 1)))
	fmt.Fprintf(stdout, "\nmost important:\n")
	for _, w := range most {
		fmt.Fprintf(stdout, "  %-20s %.4f\n", w.Word, w.Phi)
	}
	fmt.Fprintf(stdout, "\nleast important:\n")
	for _, w := range least {
		fmt.Fprintf(stdout, "  %-20s %.4f\n", w.Word, w.Phi)
	}
	return nil
}
