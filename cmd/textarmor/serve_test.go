package main

import (
	"encoding/csv"
	"math"
	"math/rand"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/serve"
	"github.com/textarmor/textarmor/text"
)

// servedTransformer saves a random two-class transformer whose head is
// widened and centred, so that its predictions vary from text to text.
func servedTransformer(t *testing.T, dir string) string {
	t.Helper()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", "."}
	lex := synth.DefaultLexicon()
	for _, g := range append(lex.Positive, lex.Negative...) {
		vocab = append(vocab, g...)
	}
	wp, err := text.NewWordPiece(append(vocab, lex.Neutral...), text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions = 32, 64
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: []string{"0", "1"}, Pieces: &opts}, wp, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	ts := m.Net.Tensors()
	for i := range ts["head.weight"].Data {
		ts["head.weight"].Data[i] *= 200
	}
	var diff []float64
	for _, e := range synth.Sentiment(60, 0, 9) {
		p := m.PredictTexts([]string{e.Text})[0].Probs
		diff = append(diff, math.Log(float64(p[1]))-math.Log(float64(p[0])))
	}
	slices.Sort(diff)
	ts["head.bias"].Data[0], ts["head.bias"].Data[1] = 0, -float32(diff[len(diff)/2])
	out := filepath.Join(dir, "tr")
	if err := m.Save(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAttackRemoteVictimEqualsLocal: serve a model, attack it through
// --victim and through --model: the same results file apart from the
// seconds column.
func TestAttackRemoteVictimEqualsLocal(t *testing.T) {
	dir := t.TempDir()
	mdir := servedTransformer(t, dir)
	te, syn := filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json")
	writeCSV(t, te, 30, 3)
	writeSynonyms(t, syn)
	cfg := serve.NewConfig()
	cfg.Models = []string{mdir}
	s, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer func() { srv.Close(); s.Close() }()
	for _, recipe := range []string{"pwws", "ga"} {
		local, remote := filepath.Join(dir, recipe+"-local.csv"), filepath.Join(dir, recipe+"-remote.csv")
		args := []string{"attack", "--test", te, "--recipe", recipe, "--protocol", "ftml", "--synonyms", syn, "--n", "30", "--workers", "2", "--quiet"}
		if code, _, stderr := runCmd(t, append(args, "--model", mdir, "--out", local)...); code != 0 {
			t.Fatalf("local attack: exit %d: %s", code, stderr)
		}
		code, stdout, stderr := runCmd(t, append(args, "--victim", srv.URL+"/v1/predict", "--victim-batch", "8", "--out", remote)...)
		if code != 0 || !strings.Contains(stderr, "texts sent in") || !strings.Contains(stdout, "accuracy under attack") {
			t.Fatalf("remote attack: exit %d: %s%s", code, stdout, stderr)
		}
		l, r := readRows(t, local), readRows(t, remote)
		succ := 0
		for i := range l {
			if !slices.Equal(l[i], r[i]) {
				t.Errorf("%s row %d:\nlocal  %q\nremote %q", recipe, i, l[i], r[i])
			}
			if l[i][6] == string(attack.Successful) {
				succ++
			}
		}
		if len(l) != 31 || len(r) != 31 || succ == 0 {
			t.Errorf("%s: %d and %d rows, %d successes", recipe, len(l), len(r), succ)
		}
	}
	// Resuming against another endpoint's model is refused.
	code, _, stderr := runCmd(t, "attack", "--test", te, "--recipe", "pwws", "--protocol", "ftml", "--synonyms", syn, "--quiet",
		"--victim", srv.URL+"/v1/predict", "--out", filepath.Join(dir, "pwws-local.csv"), "--resume")
	if code == 0 || !strings.Contains(stderr, "cannot resume") {
		t.Errorf("resuming a local run remotely: exit %d %s", code, stderr)
	}
}

// readRows reads a results CSV without its seconds column.
func readRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	at := slices.Index(attack.Columns, "seconds")
	for i := range rows {
		rows[i] = slices.Delete(rows[i], at, at+1)
	}
	return rows
}

// TestServeAndVictimFlagRanges: serve's numeric flags and attack's
// --victim ones are refused naming the flag; a remote victim excludes
// --model and --explain.
func TestServeAndVictimFlagRanges(t *testing.T) {
	s := func(args ...string) []string { return append([]string{"serve", "--model", "m"}, args...) }
	a := func(args ...string) []string {
		return append([]string{"attack", "--victim", "http://127.0.0.1:1/v1/predict", "--recipe", "pwws", "--test", "t.csv"}, args...)
	}
	checkFlagRanges(t, []flagRangeCase{
		{s("--max-batch", "0"), "--max-batch 0"},
		{s("--max-wait", "2s"), "--max-wait 2s"},
		{s("--workers", "0"), "--workers 0"},
		{s("--queue", "0"), "--queue 0"},
		{s("--max-body", "10"), "--max-body 10"},
		{s("--max-texts", "0"), "--max-texts 0"},
		{s("--max-words", "-1"), "--max-words -1"},
		{s("--timeout", "0s"), "--timeout 0s"},
		{s("--max-queries", "0"), "--max-queries 0"},
		{a("--victim-batch", "0"), "--victim-batch 0"},
		{a("--victim-concurrency", "0"), "--victim-concurrency 0"},
		{a("--victim-timeout", "0s"), "--victim-timeout 0s"},
		{a("--victim-retries", "-1"), "--victim-retries -1"},
		{a("--victim-budget", "-5"), "--victim-budget -5"},
	})
	for _, c := range []struct {
		args []string
		want string
	}{
		{a("--model", "m"), "give --model or --victim, not both"},
		{a("--explain", "ig"), "--explain needs the model's gradients"},
		{[]string{"serve"}, "--model is required"},
	} {
		if code, _, stderr := runCmd(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d %s", c.args, code, stderr)
		}
	}
	// Nothing listening: an error naming the endpoint.
	if code, _, stderr := runCmd(t, a("--victim-retries", "0", "--quiet")...); code != 1 || !strings.Contains(stderr, "remote victim http://127.0.0.1:1/v1/predict") {
		t.Errorf("no endpoint: exit %d %s", code, stderr)
	}
}
