package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
)

// TestAttackTextBugger: `attack --recipe textbugger` runs with the neighbour
// sets and with --vectors (its own k = 5 with no cosine threshold, and the
// USE stand-in), flips examples whose written texts fool the model when
// read back, declares its deviations, and is refused under --protocol ftml.
func TestAttackTextBugger(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	vec := filepath.Join(dir, "vec.txt")
	writeVectors(t, vec)
	run := func(out string, extra ...string) map[string]any {
		t.Helper()
		args := append([]string{"attack", "--model", mdir, "--test", te, "--recipe", "textbugger", "--n", "20", "--workers", "2",
			"--json", "--quiet", "--out", filepath.Join(dir, out)}, extra...)
		code, stdout, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("--json output %q: %v", stdout, err)
		}
		return rep
	}
	devs := func(rep map[string]any) string {
		b, _ := json.Marshal(rep["deviations"])
		return string(b)
	}

	rep := run("syn.csv", "--synonyms", syn)
	if rep["recipe"] != "textbugger" || !strings.Contains(rep["description"].(string), "textbugger(insert-space,delete,swap,homoglyph,sub-w=first5(syn)") {
		t.Errorf("recipe %v: %v", rep["recipe"], rep["description"])
	}
	for _, want := range []string{"first 5 of the counter-fitted neighbour sets", "USE sentence-similarity constraint", "random positions"} {
		if !strings.Contains(devs(rep), want) {
			t.Errorf("deviations lack %q: %s", want, devs(rep))
		}
	}
	if rep["successful"].(float64) == 0 || rep["mismatched"].(float64) != 0 || rep["verified"] != rep["successful"] {
		t.Errorf("successful %v, verified %v, mismatched %v", rep["successful"], rep["verified"], rep["mismatched"])
	}
	rs, _, err := attack.ReadCSV(filepath.Join(dir, "syn.csv"))
	if err != nil || len(rs) != 20 {
		t.Fatalf("results file: %d rows, %v", len(rs), err)
	}
	for _, r := range rs {
		if r.Type == attack.Successful && r.PerturbedText == r.OriginalText {
			t.Errorf("success without a change: %+v", r)
		}
	}

	rep = run("vec.csv", "--vectors", vec)
	for _, want := range []string{"Sub-W: the 5 nearest words in vec.txt", "GloVe", "USE replaced by mean-word-vector-cosine(vec.txt)"} {
		if !strings.Contains(devs(rep), want) {
			t.Errorf("deviations with --vectors lack %q: %s", want, devs(rep))
		}
	}
	if d := rep["description"].(string); !strings.Contains(d, "sentence-similarity(mean-word-vector-cosine(vec.txt)>=0.809") {
		t.Errorf("description %s", d)
	}
	if cached, _ := filepath.Glob(filepath.Join(dir, "knn-*-k5-cos-1.json")); len(cached) != 1 {
		t.Errorf("nearest table for k=5, any cosine: %v", cached)
	}

	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textbugger", "--protocol", "ftml",
		"--synonyms", syn, "--quiet"); code != 2 || !strings.Contains(stderr, "not part of the FTML protocol") {
		t.Errorf("--protocol ftml: exit %d, %s", code, stderr)
	}
}
