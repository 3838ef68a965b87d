package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/vocabgroup"
)

// TestTrainGroupMask trains FLAT's trivial group-mask baseline end to end
// with both groupings, and rejects the group-mask flags with other
// defenses.
func TestTrainGroupMask(t *testing.T) {
	dir := t.TempDir()
	tr, dv, te, syn := filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv"), filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json")
	writeCSV(t, tr, 200, 1)
	writeCSV(t, dv, 60, 2)
	writeCSV(t, te, 60, 3)
	writeSynonyms(t, syn)
	common := []string{"train", "--train", tr, "--dev", dv, "--test", te, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "2", "--batch", "32", "--lr", "0.01", "--group-mask", "3", "--quiet"}

	// Neighbour-graph components.
	out := filepath.Join(dir, "components")
	code, _, stderr := runCmd(t, append(common, "--synonyms", syn, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("%s", stderr)
	for _, want := range []string{"group mask: 3 groups from neighbour-graph components of " + syn, "k-means needs --group-vectors",
		"extra group holds", "group mask: learnt scales"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	m, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.Net.Cfg
	if cfg.NumGroups != 4 || len(cfg.Groups) != m.Vocab.Len() || m.Net.GroupMask == nil {
		t.Fatalf("model has %d groups over %d ids (vocabulary %d)", cfg.NumGroups, len(cfg.Groups), m.Vocab.Len())
	}
	rec, _ := m.Training["group_mask"].(map[string]any)
	if rec["method"] != vocabgroup.MethodComponents || rec["groups"] != 3.0 || rec["synonyms"] != syn {
		t.Errorf("training record %v", m.Training["group_mask"])
	}
	if m.Training["defense"] != "standard" {
		t.Errorf("defense %v", m.Training["defense"])
	}
	// Synonyms share a group; the scales were trained.
	joined := 0
	for w, l := range synth.DefaultLexicon().Synonyms() {
		for _, u := range l {
			if m.Vocab.Has(w) && m.Vocab.Has(u) {
				joined++
				if gw, gu := cfg.Groups[m.Vocab.ID(w)], cfg.Groups[m.Vocab.ID(u)]; gw != gu || gw == 3 {
					t.Errorf("synonyms %s, %s in groups %d, %d", w, u, gw, gu)
				}
			}
		}
	}
	if joined == 0 {
		t.Fatal("no synonym pair in the vocabulary: the test checks nothing")
	}
	moved := false
	for _, s := range m.Net.GroupScales()[:3] {
		moved = moved || s != 1
	}
	if !moved {
		t.Errorf("group scales %v were not trained", m.Net.GroupScales())
	}

	// k-means on generated vectors.
	vec := filepath.Join(dir, "vectors.txt")
	writeVectors(t, vec) // synonym groups lie close together
	out = filepath.Join(dir, "kmeans")
	code, _, stderr = runCmd(t, append(common, "--group-vectors", vec, "--epochs", "1", "--out", out)...)
	if code != 0 {
		t.Fatalf("k-means: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "group mask: 3 groups from k-means") {
		t.Errorf("k-means stderr:\n%s", stderr)
	}
	if m, err = model.Load(out); err != nil {
		t.Fatal(err)
	}
	if rec, _ := m.Training["group_mask"].(map[string]any); rec["method"] != vocabgroup.MethodKMeans || rec["vectors"] != vec {
		t.Errorf("k-means training record %v", m.Training["group_mask"])
	}

	for _, bad := range [][]string{
		{"--defense", "ftml", "--group-mask", "3"},
		{"--defense", "flat", "--group-mask", "3"},
		{"--defense", "sem", "--group-vectors", vec},
		{"--group-vectors", vec},
		{"--group-mask", "-1"},
		{"--group-mask", "3", "--group-vectors", vec, "--synonyms", syn},
		{"--synonyms", syn},
	} {
		args := append([]string{"train", "--train", tr, "--out", filepath.Join(dir, "bad")}, bad...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", bad, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); !os.IsNotExist(err) {
		t.Error("a rejected run left a model behind")
	}
}
