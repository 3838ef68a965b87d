package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"sort"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// specGapNeighbours is the number of nearest counter-fitted neighbours per
// word of FLAT spec §9.3's synonym importance gap.
const specGapNeighbours = 10

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
	if top < 1 {
		return usageError{fmt.Errorf("--top %d must be positive", top)}
	}
	if gapWords < 1 {
		return usageError{fmt.Errorf("--gap-words %d must be positive", gapWords)}
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
	ps := phiSummary(phi)

	// Diagnostics of spec §9.3: synonym importance gap and correlations.
	var notes []string
	var gap *gapStats
	nb, synUsed, err := loadNeighborFile(synPath, df.dir)
	switch {
	case err == nil:
		g := synonymGap(phi, m.Vocab, nb, gapWords, seed)
		g.Synonyms = synUsed
		if g.Pairs == 0 {
			notes = append(notes, fmt.Sprintf("synonym importance gap skipped: no vocabulary word has an in-vocabulary neighbour in %s", synUsed))
		} else {
			gap = &g
		}
	case synPath == "" && errors.Is(statErr(synUsed), os.ErrNotExist):
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
			r    *correlation
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

func statErr(path string) error {
	_, err := os.Stat(path)
	return err
}

// phiStats summarises φ over the vocabulary (spec §13 check 10).
type phiStats struct {
	Median       float64 `json:"median"`
	ShareAbove09 float64 `json:"share_above_0_9"`
	ShareBelow01 float64 `json:"share_below_0_1"`
	Share04to06  float64 `json:"share_0_4_0_6"` // strictly inside (0.4, 0.6)
}

// phiSummary computes phiStats over the real words (ids ≥ 2) of phi.
func phiSummary(phi []float32) phiStats {
	var v []float64
	for id := 2; id < len(phi); id++ {
		v = append(v, float64(phi[id]))
	}
	if len(v) == 0 {
		return phiStats{}
	}
	var s phiStats
	for _, x := range v {
		switch {
		case x > 0.9:
			s.ShareAbove09++
		case x < 0.1:
			s.ShareBelow01++
		case x > 0.4 && x < 0.6:
			s.Share04to06++
		}
	}
	k := float64(len(v))
	s.ShareAbove09 /= k
	s.ShareBelow01 /= k
	s.Share04to06 /= k
	sort.Float64s(v)
	s.Median = quantile(v, 0.5)
	return s
}

// quantile is the q-quantile of sorted (non-empty) with linear
// interpolation between order statistics (numpy's default, R type 7, what
// matplotlib's box plots draw).
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

type fiveNumbers struct {
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
}

// gapStats is the synonym importance gap of spec §9.3 (Fig. 5).
type gapStats struct {
	Synonyms string `json:"synonyms"`
	// CandidateWords counts the vocabulary words with at least one
	// neighbour in the vocabulary; SampledWords of them were drawn.
	CandidateWords int   `json:"candidate_words"`
	SampledWords   int   `json:"sampled_words"`
	Seed           int64 `json:"seed"`
	// NeighboursPerWord is the cap on a word's in-vocabulary neighbours
	// (the spec's 10); FileMaxNeighbours the longest list in the table.
	NeighboursPerWord int `json:"neighbours_per_word"`
	FileMaxNeighbours int `json:"file_max_neighbours"`
	// Pairs counts the (word, neighbour) pairs; Mean and Variance
	// (population, ddof 0) and Quartiles are over their |φ_w − φ_w'|.
	Pairs     int         `json:"pairs"`
	Mean      float64     `json:"mean"`
	Variance  float64     `json:"variance"`
	Quartiles fiveNumbers `json:"quartiles"`
	Deviation string      `json:"deviation,omitempty"`
}

// synonymGap samples up to words vocabulary words that have a neighbour in
// the vocabulary (seeded) and collects |φ_w − φ_w'| over each one's
// in-vocabulary neighbours, nearest first, at most specGapNeighbours.
func synonymGap(phi []float32, vocab *text.Vocab, nb *lexicon.Neighbors, words int, seed int64) gapStats {
	g := gapStats{Seed: seed, NeighboursPerWord: specGapNeighbours}
	for _, w := range nb.Words() {
		g.FileMaxNeighbours = max(g.FileMaxNeighbours, len(nb.Synonyms(w)))
	}
	if g.FileMaxNeighbours < specGapNeighbours {
		g.Deviation = fmt.Sprintf("spec §9.3 takes each word's %d nearest counter-fitted neighbours in the vocabulary; "+
			"this table holds at most %d per word, so every in-vocabulary neighbour is used", specGapNeighbours, g.FileMaxNeighbours)
	}
	r := nb.Restrict(vocab) // real vocabulary words and neighbours only, order kept
	type cand struct {
		id   int32
		nbrs []string
	}
	var cands []cand
	for id := int32(text.UnkID) + 1; int(id) < vocab.Len(); id++ {
		if l := r.Synonyms(vocab.Word(id)); len(l) > 0 {
			cands = append(cands, cand{id, l[:min(len(l), specGapNeighbours)]})
		}
	}
	g.CandidateWords = len(cands)
	perm := rand.New(rand.NewSource(seed)).Perm(len(cands))
	pick := perm[:min(words, len(perm))]
	sort.Ints(pick)
	g.SampledWords = len(pick)
	var gaps []float64
	for _, i := range pick {
		c := cands[i]
		for _, u := range c.nbrs {
			gaps = append(gaps, math.Abs(float64(phi[c.id])-float64(phi[vocab.ID(u)])))
		}
	}
	g.Pairs = len(gaps)
	if len(gaps) == 0 {
		return g
	}
	for _, x := range gaps {
		g.Mean += x
	}
	g.Mean /= float64(len(gaps))
	for _, x := range gaps {
		g.Variance += (x - g.Mean) * (x - g.Mean)
	}
	g.Variance /= float64(len(gaps))
	sort.Float64s(gaps)
	g.Quartiles = fiveNumbers{gaps[0], quantile(gaps, 0.25), quantile(gaps, 0.5), quantile(gaps, 0.75), gaps[len(gaps)-1]}
	return g
}

// correlation is one Pearson r with its two-sided p-value, or why it is
// undefined.
type correlation struct {
	R     *float64 `json:"r,omitempty"`
	P     *float64 `json:"p,omitempty"`
	N     int      `json:"n"`
	Error string   `json:"error,omitempty"`
}

func pearson(x, y []float64) *correlation {
	r, p, err := metrics.Pearson(x, y)
	if err != nil {
		return &correlation{N: len(x), Error: err.Error()}
	}
	return &correlation{R: &r, P: &p, N: len(x)}
}

// correlations of spec Table 9 between WI (φ), WF (training-corpus
// frequency) and SF (substitution count) over the vocabulary.
type correlations struct {
	Words int `json:"words"`
	// WFSource names the training data WF was counted on.
	WFSource string       `json:"wf_source,omitempty"`
	WIWF     *correlation `json:"wi_wf,omitempty"`
	WISF     *correlation `json:"wi_sf,omitempty"`
	WFSF     *correlation `json:"wf_sf,omitempty"`
}

// importanceCorrelations computes the Table 9 correlations that the inputs
// allow: WF needs --dataset or --train, SF the model's substitution_counts
// training record. It returns nil and notes when neither is there.
func importanceCorrelations(m *model.Model, phi []float32, df *dataFlags) (*correlations, []string, error) {
	var notes []string
	nw := m.Vocab.Len() - 2
	wi := make([]float64, nw)
	for i := range wi {
		wi[i] = float64(phi[i+2])
	}
	var wf []float64
	c := &correlations{Words: nw}
	if df.name != "" || df.train != "" {
		ds, _, err := df.load()
		if err != nil {
			return nil, nil, err
		}
		if len(ds.Train) == 0 {
			return nil, nil, fmt.Errorf("dataset %s has no training split to count word frequencies on", ds.Name)
		}
		wf = wordFrequencies(m, ds.Train)
		c.WFSource = fmt.Sprintf("%s train (%d texts, %s tokenizer)", ds.Name, len(ds.Train), m.Tokenizer)
	} else {
		notes = append(notes, "WF correlations skipped: no training data (give --dataset NAME or --train FILE)")
	}
	sf, err := substitutionFrequencies(m)
	if err != nil {
		return nil, nil, err
	}
	if sf == nil {
		notes = append(notes, "SF correlations skipped: the model's training record has no substitution_counts (FLAT training records them)")
	}
	if wf != nil {
		c.WIWF = pearson(wi, wf)
	}
	if sf != nil {
		c.WISF = pearson(wi, sf)
	}
	if wf != nil && sf != nil {
		c.WFSF = pearson(wf, sf)
	}
	if c.WIWF == nil && c.WISF == nil {
		return nil, notes, nil
	}
	return c, notes, nil
}

// wordFrequencies counts each real vocabulary word (ids ≥ 2, index id−2) in
// the training texts, tokenised with the model's tokenizer and not
// truncated, as the vocabulary was built.
func wordFrequencies(m *model.Model, ex []dataset.Example) []float64 {
	wf := make([]float64, m.Vocab.Len()-2)
	for _, e := range ex {
		for _, tok := range m.Tok.Tokenize(e.Text) {
			if id := m.Vocab.ID(tok.Text); id > text.UnkID {
				wf[id-2]++
			}
		}
	}
	return wf
}

// substitutionFrequencies reads SF for every real vocabulary word (index
// id−2) from the model's substitution_counts training record (word ->
// count; absent words count 0). It returns nil when there is no record; a
// null record (no substitution was made) gives all zeros.
func substitutionFrequencies(m *model.Model) ([]float64, error) {
	raw, ok := m.Training["substitution_counts"]
	if !ok {
		return nil, nil
	}
	sf := make([]float64, m.Vocab.Len()-2)
	add := func(w string, c float64) {
		if id := m.Vocab.ID(w); id > text.UnkID {
			sf[id-2] += c
		}
	}
	switch counts := raw.(type) {
	case nil:
	case map[string]any: // as loaded from the model's JSON
		for w, v := range counts {
			c, ok := v.(float64)
			if !ok {
				return nil, fmt.Errorf("training record substitution_counts[%q] = %v is not a number", w, v)
			}
			add(w, c)
		}
	case map[string]int: // as set in memory by FLAT training
		for w, v := range counts {
			add(w, float64(v))
		}
	default:
		return nil, fmt.Errorf("training record substitution_counts is %T, want a word -> count object", raw)
	}
	return sf, nil
}
