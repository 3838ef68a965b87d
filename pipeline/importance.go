package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
)

// ImportanceConfig configures Importance (`textarmor importance`).
type ImportanceConfig struct {
	Model string // a masked (FLAT) model's directory (required)
	// Data, when it names a preset or training files, gives the training
	// texts the word-frequency (WF) correlations count on; Data.Dir is also
	// where the default neighbour table is looked for.
	Data Data
	// Synonyms is the neighbour table of the synonym importance gap ("" =
	// the default under Data.Dir; the gap is skipped when that is missing).
	Synonyms string
	// Top is how many words to list at each end; GapWords how many
	// vocabulary words (with an in-vocabulary neighbour) the gap samples,
	// with Seed.
	Top, GapWords int
	Seed          int64
}

// NewImportanceConfig returns the CLI's defaults.
func NewImportanceConfig() ImportanceConfig {
	return ImportanceConfig{Data: NewData(), Top: 20, GapWords: 1000, Seed: 1}
}

// Check validates the counts.
func (c ImportanceConfig) Check() error {
	if c.Model == "" {
		return configErrorf("--model is required")
	}
	return CheckRules(Rule{c.Top >= 1, "top", c.Top, "at least 1"},
		Rule{c.GapWords >= 1, "gap-words", c.GapWords, "at least 1"})
}

// WordPhi is a word with its learnt importance φ.
type WordPhi struct {
	Word string  `json:"word"`
	Phi  float32 `json:"phi"`
}

// ImportanceReport summarises a masked model's word importances (FLAT
// spec §9.3, Fig. 5, Table 9).
type ImportanceReport struct {
	// Words counts the vocabulary words (<pad> and <unk> left out); Most
	// and Least are the Top words at each end, most extreme first.
	Words       int
	Most, Least []WordPhi
	MeanPhi     float64
	Phi         explain.PhiStats
	// Gap is the synonym importance gap, nil when skipped (Notes say why).
	Gap *explain.GapStats
	// Correlations of importance with word and substitution frequencies,
	// nil when neither could be computed (Notes say why).
	Correlations *explain.Correlations
	Notes        []string
}

// Importance lists a masked model's most and least important words and
// the diagnostics of FLAT spec §9.3: the synonym importance gap and the
// correlations with word and substitution frequencies.
func Importance(ctx context.Context, c ImportanceConfig) (*ImportanceReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	phi := m.Net.WordImportance()
	if phi == nil {
		return nil, fmt.Errorf("%s has no word mask (train it with --defense flat)", c.Model)
	}
	words := m.Vocab.Words()
	var all []WordPhi
	for id := 2; id < len(words); id++ { // skip <pad>, <unk>
		all = append(all, WordPhi{words[id], phi[id]})
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].Phi > all[b].Phi })
	n := min(c.Top, len(all))
	r := &ImportanceReport{Words: len(all), Most: all[:n], Least: make([]WordPhi, n), Phi: explain.SummarizePhi(phi)}
	for i := range r.Least {
		r.Least[i] = all[len(all)-1-i]
	}
	for _, w := range all {
		r.MeanPhi += float64(w.Phi)
	}
	if len(all) > 0 {
		r.MeanPhi /= float64(len(all))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	nb, synUsed, err := LoadNeighbors(c.Synonyms, c.Data.Dir)
	switch {
	case err == nil:
		g := explain.SynonymGap(phi, m.Vocab, nb, c.GapWords, c.Seed)
		g.Synonyms = synUsed
		if g.Pairs == 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("synonym importance gap skipped: no vocabulary word has an in-vocabulary neighbour in %s", synUsed))
		} else {
			r.Gap = &g
		}
	case c.Synonyms == "" && synUsed == "":
		// No data folder: the gap is an optional diagnostic.
		r.Notes = append(r.Notes, "synonym importance gap skipped: no neighbour table (give one with --synonyms FILE, or --data DIR)")
	case c.Synonyms == "" && errors.Is(err, os.ErrNotExist):
		r.Notes = append(r.Notes, fmt.Sprintf("synonym importance gap skipped: no neighbour table at %s (give one with --synonyms FILE)", synUsed))
	default:
		return nil, err
	}
	corr, notes, err := importanceCorrelations(m, phi, c.Data)
	if err != nil {
		return nil, err
	}
	r.Correlations, r.Notes = corr, append(r.Notes, notes...)
	return r, nil
}

// importanceCorrelations loads what the Table 9 correlations need: WF
// needs a preset or training files, SF the model's substitution_counts
// training record. It returns nil and notes when neither is there.
func importanceCorrelations(m *model.Model, phi []float32, d Data) (*explain.Correlations, []string, error) {
	var notes []string
	var wf []float64
	source := ""
	if d.Preset != "" || d.Train != "" {
		ds, _, err := d.Load()
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
