package model

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// A saved textarmor transformer starts a new task: its encoder tensors
// carry over, the head is new and of the new task's size, and its
// sentence embeddings are unchanged.
func TestImportEncoder(t *testing.T) {
	src := tinyTransformer(t)
	src.Sentence = &SentenceSpec{Pool: "mean", Normalize: true}
	dir := filepath.Join(t.TempDir(), "enc")
	if err := src.Save(dir); err != nil {
		t.Fatal(err)
	}
	m, err := ImportEncoder(dir, ImportOptions{Classes: []string{"a", "b", "c"}, Pool: "cls", MaxLen: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if m.Net.Out.W.Value.Shape[1] != 3 || m.MaxLen != 16 || m.Net.Cfg.Transformer.Pool != "cls" || !slices.Equal(m.Classes, []string{"a", "b", "c"}) {
		t.Fatalf("head %v, max len %d, pool %s, classes %v", m.Net.Out.W.Value.Shape, m.MaxLen, m.Net.Cfg.Transformer.Pool, m.Classes)
	}
	want := src.Net.Tensors()
	for name, x := range m.Net.Tensors() {
		if name == "head.weight" || name == "head.bias" { // the new task's head
			continue
		}
		if y, ok := want[name]; !ok || tensor.MaxAbsDiff(x.Data, y.Data) != 0 {
			t.Errorf("%s not carried over", name)
		}
	}
	a, _ := src.Embed([]string{"the movie was good"})
	b, _ := m.Embed([]string{"the movie was good"})
	if tensor.MaxAbsDiff(a[0], b[0]) != 0 {
		t.Error("the encoder's sentence embedding changed")
	}
	if p := m.PredictTexts([]string{"bad"}); len(p[0].Probs) != 3 {
		t.Errorf("predictions %v", p)
	}
	if _, err := ImportEncoder(filepath.Join(t.TempDir(), "none"), ImportOptions{}); err == nil {
		t.Error("a missing directory accepted")
	}
}
