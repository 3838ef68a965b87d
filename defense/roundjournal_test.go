package defense

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoundJournalOtherRun checks that a log written against other weights is
// discarded on resume, and that a damaged line before the last is an error
// naming the file and line.
func TestRoundJournalOtherRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.round1.attack.jsonl")
	hdr := roundJournalHeader{Round: 1, N: 3, Seed: 8, Weights: "aa"}
	lg, prev, stale, err := openRoundJournal(path, hdr, true)
	if err != nil || len(prev) != 0 || stale {
		t.Fatalf("new log: %v %v %v", prev, stale, err)
	}
	lg.Write(roundJournalEntry{Index: 0, Type: "Successful", Text: "x"})
	lg.Write(roundJournalEntry{Index: 2, Type: "Failed", Text: "y"})
	lg.Close()

	lg, prev, stale, err = openRoundJournal(path, hdr, true)
	if err != nil || len(prev) != 2 || prev[2].Text != "y" || stale {
		t.Fatalf("same run: %v %v %v", prev, stale, err)
	}
	lg.Close()
	other := hdr
	other.Weights = "bb"
	lg, prev, stale, err = openRoundJournal(path, other, true)
	if err != nil || len(prev) != 0 || !stale {
		t.Fatalf("other weights: kept %v, stale %v (%v)", prev, stale, err)
	}
	lg.Close()
	if _, _, ok, _ := readRoundJournal(path, hdr); ok {
		t.Error("the old run's log was not replaced")
	}

	os.WriteFile(path, []byte(`{"round":1,"n":3,"seed":8,"weights_sha256":"aa"}`+"\n{bad\n"+`{"index":1,"type":"Failed","text":"z"}`+"\n"), 0o666)
	if _, _, _, err := openRoundJournal(path, hdr, true); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("damaged line 2: %v", err)
	}
	os.WriteFile(path, []byte(`{"round":1,"n":3,"seed":8,"weights_sha256":"aa"}`+"\n"+`{"index":7,"type":"Failed","text":"z"}`+"\n"), 0o666)
	if _, _, _, err := openRoundJournal(path, hdr, true); err == nil || !strings.Contains(err.Error(), "index 7") {
		t.Errorf("index outside the round: %v", err)
	}
}
