package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
)

// TestReportCommand: flags go before or after the folders; the page is
// written, and bad calls are usage errors naming what is wrong.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "-results")
	if err := os.MkdirAll(filepath.Join(res, "cnn"), 0o755); err != nil {
		t.Fatal(err)
	}
	csv := strings.Join(attack.Columns, ",") + "\n" + `"a gripping film","a riveting film",1,0,1,12,Successful,0,0.05,3,1,14` + "\n"
	log := `{"epoch":1,"train_loss":0.6,"train_acc":0.7,"dev_acc":0.78}` + "\n"
	for name, text := range map[string]string{"cnn/pwws.csv": csv, "cnn.log.jsonl": log, "bad.log.jsonl": "{\n"} {
		if err := os.WriteFile(filepath.Join(res, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "r.html")
	code, stdout, stderr := runCmd(t, "report", filepath.Join(res, "cnn"), "--out", out, "--examples", "3", filepath.Join(res, "cnn.log.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "r.html: 5 charts from 2 files (1 attack results, 1 training logs)") {
		t.Errorf("stdout %q", stdout)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), `<mark class="ins">riveting</mark>`) {
		t.Errorf("page: %v", err)
	}
	// After "--" an argument that looks like a flag is a path.
	if code, _, stderr := runCmd(t, "report", "--out", out, "--", res+"/cnn"); code != 0 {
		t.Errorf("with --: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", res}, 2, "--out is required"},
		{[]string{"report", "--out", out}, 2, "give the result files"},
		{[]string{"report", res, "--out", out, "--examples", "-2"}, 2, "--examples -2"},
		{[]string{"report", res, "--out", out, "--nope"}, 2, "nope"},
		{[]string{"report", filepath.Join(res, "bad.log.jsonl"), "--out", out}, 1, "bad.log.jsonl:1"},
		{[]string{"report", filepath.Join(dir, "missing"), "--out", out}, 1, "missing"},
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args[1:], code, stderr, c.code, c.want)
		}
	}
}
