package attack

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestKeptByIndex(t *testing.T) {
	dir := t.TempDir()
	if kept, err := KeptByIndex(filepath.Join(dir, "none.csv")); kept != nil || err != nil {
		t.Fatalf("a missing file: %v, %v", kept, err)
	}
	path := filepath.Join(dir, "r.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(Columns)
	for i, typ := range []ResultType{Failed, Successful, Skipped} {
		w.Write([]string{"a b", "a c", "1", "0", "1", "10", string(typ), strconv.Itoa(10 + i), "0.1", "2", "1", "12"})
	}
	w.Flush()
	if err := f.Close(); err != nil || w.Error() != nil {
		t.Fatal(err, w.Error())
	}
	kept, err := KeptByIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 3 || !kept[10] || kept[11] || kept[12] {
		t.Errorf("kept %v: want 10 kept, 11 (successful) and 12 (skipped) not", kept)
	}
}
