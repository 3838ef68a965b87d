package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

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
			Successful int       `json:"successful"`
			Tau        float64   `json:"kendall_tau"`
			TI         float64   `json:"topk_intersection"`
			Explain    Agreement `json:"explain"`
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
	ef := explainFlags{method: "ig", k: 5}
	s := ef.pair(m, "the movie was good and fun to watch", "the movie was good and fun to watch", 1)
	if s.err != nil || !s.explainedOK || !s.tauOK || math.Abs(s.tau-1) > 1e-12 || s.ti != 1 {
		t.Errorf("self pair %+v", s)
	}
}
