package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/explain"
)

// An --explain pass with --out keeps each pair's scores in a journal beside
// the CSV; a resumed run reuses them (a torn last line dropped) and ends
// with the same agreement as an uninterrupted run; a journal of other
// settings, a broken line or a pair whose texts are not the attack's is
// refused with the file named.
func TestAttackExplainJournalResumes(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	csvPath := filepath.Join(dir, "tf.csv")
	jpath := csvPath + ".explain-ig-all.jsonl"
	attackArgs := func(extra ...string) []string {
		return append([]string{"attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--protocol", "flat",
			"--synonyms", syn, "--wordnet", filepath.Join(dir, "none"), "--n", "30", "--workers", "2", "--json", "--quiet",
			"--explain", "ig", "--out", csvPath}, extra...)
	}
	run := func(extra ...string) explain.Agreement {
		t.Helper()
		code, stdout, stderr := runCmd(t, attackArgs(extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var rep struct {
			Explain explain.Agreement `json:"explain"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		rep.Explain.Seconds = 0
		return rep.Explain
	}
	readLines := func() (header string, pairs map[int]journalLine, raw []string) {
		t.Helper()
		data, err := os.ReadFile(jpath)
		if err != nil {
			t.Fatal(err)
		}
		raw = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		pairs = map[int]journalLine{}
		for _, s := range raw[1:] {
			var l journalLine
			if err := json.Unmarshal([]byte(s), &l); err != nil {
				t.Fatalf("journal line %q: %v", s, err)
			}
			if _, dup := pairs[l.Index]; dup {
				t.Fatalf("example %d journalled twice", l.Index)
			}
			pairs[l.Index] = l
		}
		return raw[0], pairs, raw
	}

	full := run()
	_, first, raw := readLines()
	if full.Pairs < 5 || len(first) != full.Pairs {
		t.Fatalf("%d pairs explained, %d journalled", full.Pairs, len(first))
	}
	// The journal alone reproduces the agreement (summed in example order,
	// as the run sums).
	var scores []explain.PairScore
	for _, i := range slices.Sorted(maps.Keys(first)) {
		scores = append(scores, first[i].PairScore)
	}
	if a := explain.Aggregate(scores, false); a.TopK != full.TopK || a.KendallTau != full.KendallTau || a.Pairs != full.Pairs {
		t.Fatalf("journal aggregates to %+v, the run said %+v", a, full)
	}

	// Stop after three pairs, mid-write of the fourth; mark one kept pair
	// so that its reuse (not a recomputation) shows in the result.
	var kept journalLine
	if err := json.Unmarshal([]byte(raw[2]), &kept); err != nil {
		t.Fatal(err)
	}
	kept.TI = 0.123456789
	b, _ := json.Marshal(kept)
	cut := strings.Join([]string{raw[0], raw[1], string(b), raw[3]}, "\n") + "\n" + raw[4][:len(raw[4])/2]
	if err := os.WriteFile(jpath, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	resumed := run("--resume")
	_, again, _ := readLines()
	if len(again) != full.Pairs || again[kept.Index].TI != kept.TI {
		t.Fatalf("after resuming: %d pairs journalled (want %d), marked pair %+v", len(again), full.Pairs, again[kept.Index])
	}
	for i, l := range again {
		if i != kept.Index && l != first[i] {
			t.Errorf("example %d: resumed %+v, first run %+v", i, l, first[i])
		}
	}
	want := full
	want.TopK += (kept.TI - first[kept.Index].TI) / float64(full.Pairs)
	if d := resumed.TopK - want.TopK; d > 1e-12 || d < -1e-12 || resumed.KendallTau != full.KendallTau || resumed.Pairs != full.Pairs {
		t.Errorf("resumed %+v, want top-k %g and the rest of %+v", resumed, want.TopK, full)
	}

	// Resuming a complete journal computes nothing and changes nothing.
	if err := os.WriteFile(jpath, []byte(strings.Join(raw, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run("--resume"); got != full {
		t.Errorf("resumed a complete journal: %+v, want %+v", got, full)
	}

	refused := func(what, content, wantErr string, extra ...string) {
		t.Helper()
		if err := os.WriteFile(jpath, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCmd(t, attackArgs(append([]string{"--resume"}, extra...)...)...)
		if code == 0 || !strings.Contains(stderr, jpath) || !strings.Contains(stderr, wantErr) {
			t.Errorf("%s: exit %d, stderr %q (want the journal named and %q)", what, code, stderr, wantErr)
		}
	}
	whole := strings.Join(raw, "\n") + "\n"
	refused("other k", whole, "other settings", "--explain-k", "3")
	refused("broken middle line", strings.Join([]string{raw[0], raw[1], "{not json", raw[3]}, "\n")+"\n", ":3:")
	other := first[kept.Index]
	other.Texts = "0123456789abcdef" // not the digest of the attack's texts
	b, _ = json.Marshal(other)
	refused("texts not the attack's", raw[0]+"\n"+string(b)+"\n", "texts are not the attack's")

	// --explain lime keeps its own journal beside the ig one.
	code, _, stderr := runCmd(t, append(attackArgs("--resume"), "--explain", "lime", "--explain-pairs", "2")...)
	if code != 0 {
		t.Fatalf("lime: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(csvPath + ".explain-lime-all.jsonl"); err != nil {
		t.Errorf("lime journal: %v", err)
	}
}

// journalLine mirrors a line of the explain journal (explain.AgreementPass).
type journalLine struct {
	Index int    `json:"index"`
	Texts string `json:"texts"`
	explain.PairScore
}
