package lexicon

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWordNetSentences(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"noun": "  1 This software and database is being provided\n" +
			"00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which is perceived or known or inferred to have its own distinct existence (living or nonliving)  \n",
		"verb": "00002724 29 v 01 choke 0 002 @ 00001740 v 0000 01 + 02 00 | breathe with great difficulty, as when experiencing a strong emotion; \"She choked with emotion when she spoke about her deceased husband\"  \n",
		"adj":  "",
		"adv":  "00001740 02 r 01 barely 0 000 | only a very short time before; \"we had barely arrived\"; \"we'd just finished\" - Shakespeare  \n",
	}
	for pos, body := range files {
		if err := os.WriteFile(filepath.Join(dir, "data."+pos), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defs, ex, err := WordNetSentences(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantDefs := []string{"That which is perceived or known or inferred to have its own distinct existence (living or nonliving).",
		"Breathe with great difficulty, as when experiencing a strong emotion.", "Only a very short time before."}
	wantEx := []string{"She choked with emotion when she spoke about her deceased husband", "we had barely arrived", "we'd just finished"}
	if !slices.Equal(defs, wantDefs) || !slices.Equal(ex, wantEx) {
		t.Fatalf("definitions %q\nexamples %q", defs, ex)
	}
	os.WriteFile(filepath.Join(dir, "data.adj"), []byte("00001 no gloss here\n"), 0o644)
	if _, _, err := WordNetSentences(dir); err == nil {
		t.Fatal("a line without a gloss accepted")
	}
	if _, _, err := WordNetSentences(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing folder accepted")
	}
	if _, err := os.Stat(DebianWordNetDir); err == nil {
		defs, ex, err := WordNetSentences(DebianWordNetDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(defs) < 100000 || len(ex) < 30000 {
			t.Errorf("WordNet 3.0: %d definitions, %d examples", len(defs), len(ex))
		}
		t.Logf("WordNet 3.0: %d definitions, %d examples", len(defs), len(ex))
	} else {
		t.Logf("skipping the real WordNet: %v", err)
	}
}
