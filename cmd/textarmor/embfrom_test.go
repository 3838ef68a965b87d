package main

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/textarmor/textarmor/model"
)

func TestTrainEmbeddingsFrom(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeCSV(t, tr, 300, 1)
	writeCSV(t, te, 60, 3)
	src := filepath.Join(dir, "src")
	common := []string{"--train", tr, "--test", te, "--epochs", "2", "--batch", "32", "--lr", "0.005", "--quiet"}
	if code, _, stderr := runCmd(t, append([]string{"train", "--model", "cnn", "--embed-dim", "16", "--filters", "8", "--out", src}, common...)...); code != 0 {
		t.Fatalf("source train exit %d: %s", code, stderr)
	}
	// A different training file: its own vocabulary would differ.
	tr2 := filepath.Join(dir, "train2.csv")
	writeCSV(t, tr2, 200, 7)
	dst := filepath.Join(dir, "dst")
	args := []string{"train", "--model", "bilstm", "--hidden", "8", "--embeddings-from", src, "--out", dst,
		"--train", tr2, "--test", te, "--epochs", "2", "--batch", "32", "--lr", "0.005", "--quiet"}
	code, _, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("transfer train exit %d: %s", code, stderr)
	}
	a, err := model.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := model.Load(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Vocab.Words(), b.Vocab.Words()) {
		t.Fatalf("vocabulary differs: %d vs %d words", a.Vocab.Len(), b.Vocab.Len())
	}
	ea, eb := a.Net.Emb.W.Value.Data, b.Net.Emb.W.Value.Data
	if len(ea) != len(eb) {
		t.Fatalf("table sizes %d vs %d", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i] != eb[i] {
			t.Fatalf("embedding differs at %d: %v vs %v", i, ea[i], eb[i])
		}
	}
	if !b.Net.Cfg.FreezeEmb {
		t.Error("the transferred table is not recorded as frozen")
	}
	rec, ok := b.Training["embeddings_from"].(map[string]any)
	if !ok || rec["path"] != src || rec["objective"] != "standard" || rec["frozen"] != true {
		t.Errorf("training record: %v", b.Training["embeddings_from"])
	}
	// The other layers did train: the model is not the source's.
	if b.Net.Cfg.Arch != "bilstm" {
		t.Errorf("arch %s", b.Net.Cfg.Arch)
	}

	// Explicit --freeze-embeddings=false fine-tunes the table.
	ft := filepath.Join(dir, "ft")
	if code, _, stderr := runCmd(t, append([]string{"train", "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--embeddings-from", src, "--freeze-embeddings=false", "--out", ft}, common...)...); code != 0 {
		t.Fatalf("fine-tune exit %d: %s", code, stderr)
	}
	c, err := model.Load(ft)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(c.Net.Emb.W.Value.Data, ea) {
		t.Error("--freeze-embeddings=false left the table unchanged")
	}
	// Conflicts are usage errors.
	for _, bad := range [][]string{
		{"--embeddings", filepath.Join(dir, "v.txt")},
		{"--max-vocab", "10"},
	} {
		args := append([]string{"train", "--embeddings-from", src, "--out", filepath.Join(dir, "x")}, append(bad, common...)...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, stderr)
		}
	}
}
