package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
)

func TestAttackExplainAgreement(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	for _, method := range []string{"ig", "lime"} {
		code, stdout, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--protocol", "flat",
			"--synonyms", syn, "--wordnet", filepath.Join(dir, "none"), "--n", "30", "--workers", "2", "--json", "--quiet", "--explain", method)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", method, code, stderr)
		}
		var rep struct {
			Successful int               `json:"successful"`
			Tau        float64           `json:"kendall_tau"`
			TI         float64           `json:"topk_intersection"`
			Explain    explain.Agreement `json:"explain"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%s: %v: %s", method, err, stdout)
		}
		a := rep.Explain
		if rep.Successful == 0 || a.Pairs != rep.Successful || a.Method != method || a.K != 5 {
			t.Fatalf("%s: %d successful, agreement %+v", method, rep.Successful, a)
		}
		if a.TauPairs+a.TauUndefined == 0 || math.Abs(rep.Tau) > 1 || rep.TI <= 0 || rep.TI > 1 || rep.Tau != a.KendallTau {
			t.Errorf("%s: agreement %+v", method, a)
		}
		t.Logf("%s: %+v", method, a)
	}
	code, stdout, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--protocol", "flat",
		"--synonyms", syn, "--n", "10", "--quiet", "--explain", "ig")
	if code != 0 || !strings.Contains(stdout, "kendall tau") || !strings.Contains(stdout, "top-5 intersection") {
		t.Fatalf("text summary: exit %d %s %s", code, stdout, stderr)
	}
	if code, _, _ := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--synonyms", syn, "--explain", "shap"); code != 2 {
		t.Errorf("--explain shap: exit %d, want 2", code)
	}

	// A text paired with itself agrees perfectly.
	m, err := model.Load(mdir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := explain.ScorePair(m, "ig", 5, "the movie was good and fun to watch", "the movie was good and fun to watch", 1, nil)
	if err != nil || !s.Explained || !s.TauOK || math.Abs(s.Tau-1) > 1e-12 || s.TI != 1 {
		t.Errorf("self pair %+v", s)
	}
}

// --explain-label gold (spec §12 F11's alternative) explains each pair's
// gold label only and macro-averages over the gold classes.
func TestAttackExplainGoldLabel(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	code, stdout, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--protocol", "flat",
		"--synonyms", syn, "--wordnet", filepath.Join(dir, "none"), "--n", "30", "--workers", "2", "--json", "--quiet",
		"--explain", "ig", "--explain-label", "gold")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Successful int               `json:"successful"`
		Explain    explain.Agreement `json:"explain"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	a := rep.Explain
	if a.Label != "gold" || a.Pairs != rep.Successful || a.Pairs == 0 || a.TopK <= 0 || a.TopK > 1 || math.Abs(a.KendallTau) > 1 {
		t.Fatalf("gold agreement %+v (%d successful)", a, rep.Successful)
	}
	// The gold mode explains the one class it is given (the pass's gold
	// averaging: pipeline's TestExplainGoldAgreement).
	m, err := model.Load(mdir)
	if err != nil {
		t.Fatal(err)
	}
	ids := m.Encode("the movie was good and fun to watch")
	attributions := func(method string, classes []int) ([][]float64, error) {
		if method == "ig" {
			return explain.IG(m.Net, ids, classes, 0)
		}
		return explain.LIME(m.Net, ids, classes, explain.LIMEOptions{Seed: 1})
	}
	for _, method := range []string{"ig", "lime"} {
		one, err1 := attributions(method, []int{1})
		every, err2 := attributions(method, nil)
		if err1 != nil || err2 != nil || len(one) != 1 || len(every) != 2 || !slices.Equal(one[0], every[1]) {
			t.Errorf("%s: class 1 alone %v, every class %v (%v, %v)", method, one, every, err1, err2)
		}
	}
	if code, _, _ := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--synonyms", syn,
		"--explain", "ig", "--explain-label", "pred"); code != 2 {
		t.Errorf("--explain-label pred: exit %d, want 2", code)
	}
}

// --explain-pairs explains a seeded uniform sample of the successful
// attacks (FLAT spec §9.2's 1,000 pairs for LIME): the sample's size is
// recorded, a rerun draws the same sample, and a size of at least all
// pairs is the unsampled run.
func TestAttackExplainPairs(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	run := func(extra ...string) explain.Agreement {
		args := append([]string{"attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--protocol", "flat",
			"--synonyms", syn, "--wordnet", filepath.Join(dir, "none"), "--n", "30", "--workers", "2", "--json", "--quiet", "--explain", "ig"}, extra...)
		code, stdout, stderr := runCmd(t, args...)
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
	all := run()
	if all.Pairs < 5 || all.SampledFrom != 0 {
		t.Fatalf("unsampled run: %+v", all)
	}
	if got := run("--explain-pairs", fmt.Sprint(all.Pairs)); got != all {
		t.Errorf("--explain-pairs %d: %+v, want the unsampled %+v", all.Pairs, got, all)
	}
	a, b := run("--explain-pairs", "3"), run("--explain-pairs", "3")
	if a.Pairs != 3 || a.SampledFrom != all.Pairs || a != b {
		t.Errorf("sample of 3 of %d: %+v, rerun %+v", all.Pairs, a, b)
	}
	if code, _, _ := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--synonyms", syn, "--explain", "ig", "--explain-pairs", "-1"); code != 2 {
		t.Errorf("--explain-pairs -1: exit %d, want 2", code)
	}
}
