package text

import (
	"os"
	"path/filepath"
	"testing"
)

// Lookup finds a word's row in a loaded file and in an embedding table,
// and nothing for unknown words, <pad>, <unk> or words the file lacks.
func TestVectorsLookup(t *testing.T) {
	v, err := NewVocab([]string{PadWord, UnkWord, "good", "bad", "rare"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v.txt")
	if err := os.WriteFile(path, []byte("good 1 0\nbad 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := LoadVectors(path, v)
	if err != nil {
		t.Fatal(err)
	}
	if vs.Name != "v.txt" || vs.Vocab != v {
		t.Errorf("loaded vectors are named %q over %v", vs.Name, vs.Vocab)
	}
	if r := vs.Lookup("bad"); len(r) != 2 || r[1] != 1 {
		t.Errorf("bad: %v", r)
	}
	for _, w := range []string{"rare", "unseen", "<pad>", "<unk>"} {
		if r := vs.Lookup(w); r != nil {
			t.Errorf("%s: %v, want none", w, r)
		}
	}
	tab := TableVectors("table", v, 1, []float32{0, 0, 1, 2, 3})
	if r := tab.Lookup("rare"); len(r) != 1 || r[0] != 3 || tab.NumFound != 5 {
		t.Errorf("table row of rare: %v (found %d)", r, tab.NumFound)
	}
	if r := (&Vectors{Name: "empty"}).Lookup("good"); r != nil {
		t.Errorf("vectors without a vocabulary: %v", r)
	}
}
