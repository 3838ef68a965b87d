package model

import (
	"math/rand"
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// TestGroupMaskRoundTrip: the group table, the group count and the learnt
// scales survive Save and Load, and so do the predictions.
func TestGroupMaskRoundTrip(t *testing.T) {
	vocab := text.BuildVocab([][]string{{"good", "great", "film"}, {"bad", "awful", "film"}}, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 8, 4
	cfg.Groups = []int32{2, 2, 0, 1, 0, 1, 0}[:vocab.Len()]
	cfg.NumGroups = 3
	m, err := New(Meta{Net: cfg, Tokenizer: "flat", MaxLen: 10, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	copy(m.Net.GroupMask.Scale.Value.Data, []float32{0.5, 1.5, 0.9})
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m2.Net.Cfg.Groups, cfg.Groups) || m2.Net.Cfg.NumGroups != 3 {
		t.Errorf("groups %v / %d reloaded as %v / %d", cfg.Groups, 3, m2.Net.Cfg.Groups, m2.Net.Cfg.NumGroups)
	}
	if got := m2.Net.GroupScales(); !slices.Equal(got, []float32{0.5, 1.5, 0.9}) {
		t.Errorf("scales reloaded as %v", got)
	}
	texts := []string{"a good film", "awful , bad", "great great"}
	p1, p2 := m.PredictTexts(texts), m2.PredictTexts(texts)
	for i := range p1 {
		if tensor.MaxAbsDiff(p1[i].Probs, p2[i].Probs) != 0 {
			t.Errorf("prediction %d changed after reload", i)
		}
	}
}
