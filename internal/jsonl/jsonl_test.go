package jsonl

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResumeAfterTornLine: a log cut inside its last line resumes after
// the complete lines, and the torn one is gone.
func TestResumeAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	w, err := Open(path, 0, map[string]int{"header": 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(map[string]int{"i": 1}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"i":`)
	f.Close()

	data, _ := os.ReadFile(path)
	var lines []string
	good, err := Scan(data, func(n int, raw []byte) error { lines = append(lines, string(raw)); return nil })
	if err != nil || len(lines) != 2 || good != int64(len(`{"header":1}`+"\n"+`{"i":1}`+"\n")) {
		t.Fatalf("Scan: %q, good %d, %v", lines, good, err)
	}
	w, err = Open(path, good, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(map[string]int{"i": 2})
	w.Close()
	if data, _ := os.ReadFile(path); string(data) != `{"header":1}`+"\n"+`{"i":1}`+"\n"+`{"i":2}`+"\n" {
		t.Fatalf("after resume: %q", data)
	}
}
