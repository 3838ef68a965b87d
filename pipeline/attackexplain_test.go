package pipeline

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// The gold label mode (--explain-label gold, spec §12 F11's alternative)
// explains each pair's gold label only: the pass's result is the
// per-class macro average of the pairs scored with their gold class.
// Three classes, so that one class's attributions are not the negation of
// the average's (as on a two-class model).
func TestExplainGoldAgreement(t *testing.T) {
	rs := []attack.Result{
		{Index: 0, Type: attack.Successful, GroundTruth: 0, OriginalText: "the movie was good and fun to watch", PerturbedText: "the film was good and fun to watch"},
		{Index: 1, Type: attack.Successful, GroundTruth: 1, OriginalText: "a dull and boring story", PerturbedText: "a dull and tedious story"},
		{Index: 2, Type: attack.Successful, GroundTruth: 2, OriginalText: "bad acting and a weak plot", PerturbedText: "poor acting and a weak plot"},
		{Index: 3, Type: attack.Failed, GroundTruth: 0, OriginalText: "a fine plot", PerturbedText: "a fine plot"},
	}
	words := []string{text.PadWord, text.UnkWord}
	seen := map[string]bool{}
	for _, r := range rs {
		for _, w := range strings.Fields(r.OriginalText + " " + r.PerturbedText) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	vocab, err := text.NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 16, 8
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 20, Classes: []string{"a", "b", "c"}}, vocab, rand.New(rand.NewSource(4)))
	if err != nil {
		t.Fatal(err)
	}
	e := ExplainConfig{Method: "ig", K: 1, Label: "gold"}
	got, err := e.agreement(m, rs, 7, 2, explainJournal{})
	if err != nil {
		t.Fatal(err)
	}
	var want []explain.PairScore
	for _, r := range rs[:3] {
		s, err := explain.ScorePair(m, e.Method, e.K, r.OriginalText, r.PerturbedText, 7+int64(r.Index), []int{r.GroundTruth})
		if err != nil {
			t.Fatal(err)
		}
		s.Gold = r.GroundTruth
		want = append(want, s)
	}
	if w := explain.Aggregate(want, true); got.TopK != w.TopK || got.KendallTau != w.KendallTau || got.Pairs != 3 || got.Label != "gold" {
		t.Errorf("gold pass %+v, want TI %g τ %g over 3 pairs", got, w.TopK, w.KendallTau)
	}
}

func TestExplainJournalPath(t *testing.T) {
	for _, tc := range []struct {
		e    ExplainConfig
		want string
	}{
		{ExplainConfig{Method: "ig"}, "r.csv.explain-ig-all.jsonl"},
		{ExplainConfig{Method: "lime", Label: "gold"}, "r.csv.explain-lime-gold.jsonl"},
	} {
		if got := tc.e.journalPath("r.csv"); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.e, got, tc.want)
		}
	}
}
