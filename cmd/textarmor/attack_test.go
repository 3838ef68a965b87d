package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
)

// writeSynonyms writes the generated task's synonym groups as a
// counter-fitted-style neighbour file.
func writeSynonyms(t *testing.T, path string) {
	t.Helper()
	lex := synth.DefaultLexicon()
	m := lex.Synonyms()
	b, _ := json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// attackFixture writes a generated test file and synonym table into dir and
// trains a small CNN on generated data: what the attack CLI tests share.
func attackFixture(t *testing.T, dir string) (te, syn, mdir string) {
	t.Helper()
	tr := filepath.Join(dir, "train.csv")
	te, syn, mdir = filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json"), filepath.Join(dir, "model")
	writeCSV(t, tr, 300, 1)
	writeCSV(t, te, 40, 3)
	writeSynonyms(t, syn)
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "3", "--batch", "32", "--lr", "0.01", "--out", mdir, "--quiet"); code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	return te, syn, mdir
}

func TestAttackEndToEnd(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	code, stdout, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "ga", "--protocol", "ftml",
		"--synonyms", syn, "--n", "25", "--workers", "2", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("attack exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("attack --json output %q: %v", stdout, err)
	}
	for _, k := range []string{"original_accuracy", "accuracy_under_attack", "attack_success_rate", "avg_perturbed_word_pct", "avg_queries", "n", "seconds", "deviations"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("--json lacks %q: %v", k, rep)
		}
	}
	if rep["n"].(float64) != 25 || rep["original_accuracy"].(float64) < rep["accuracy_under_attack"].(float64) {
		t.Errorf("summary %v", rep)
	}

	// Text output, a results file, and resuming a finished run.
	out := filepath.Join(dir, "r.csv")
	args := []string{"attack", "--model", mdir, "--test", te, "--recipe", "pwws", "--protocol", "ftml", "--synonyms", syn, "--n", "10", "--out", out, "--quiet"}
	code, stdout, stderr = runCmd(t, args...)
	if code != 0 || !strings.Contains(stdout, "accuracy under attack") {
		t.Fatalf("attack exit %d: %s%s", code, stdout, stderr)
	}
	first, _ := os.ReadFile(out)
	if lines := strings.Count(string(first), "\n"); lines != 11 {
		t.Fatalf("results file has %d lines, want header + 10", lines)
	}
	if code, _, stderr = runCmd(t, args...); code != 2 || !strings.Contains(stderr, "--resume") {
		t.Fatalf("existing --out without --resume: exit %d %s", code, stderr)
	}
	if code, _, stderr = runCmd(t, append(args, "--resume")...); code != 0 {
		t.Fatalf("resume exit %d: %s", code, stderr)
	}
	if again, _ := os.ReadFile(out); string(again) != string(first) {
		t.Fatal("resuming a finished run changed the results file")
	}

	code, _, stderr = runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "nope", "--synonyms", syn)
	if code != 2 || !strings.Contains(stderr, "pwws") || !strings.Contains(stderr, "textfooler") {
		t.Fatalf("unknown recipe: exit %d %s", code, stderr)
	}
}

// An attack assembled from parts on the command line: without a recipe, and
// as a recipe with one part replaced (a declared deviation).
func TestAttackFromParts(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	run := func(extra ...string) (int, map[string]any, string) {
		t.Helper()
		args := append([]string{"attack", "--model", mdir, "--test", te, "--synonyms", syn, "--n", "20", "--workers", "2", "--json", "--quiet"}, extra...)
		code, stdout, stderr := runCmd(t, args...)
		var rep map[string]any
		if code == 0 {
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("--json output %q: %v", stdout, err)
			}
		}
		return code, rep, stderr
	}
	code, rep, stderr := run("--transformation", "synonyms", "--search", "beam:width=2", "--constraint", "repeat",
		"--constraint", "stopwords:list=ftml", "--constraint", "max-rate:rate=0.25")
	if code != 0 {
		t.Fatalf("custom attack: exit %d: %s", code, stderr)
	}
	desc := rep["description"].(string)
	for _, want := range []string{"custom attack", "search=beam(width=2)", "repeat-modification", "stopwords(ftml-21)", "max-modification-rate(0.25)", "word-swap("} {
		if !strings.Contains(desc, want) {
			t.Errorf("description %q lacks %q", desc, want)
		}
	}
	if rep["recipe"] != "custom" || rep["successful"].(float64) == 0 {
		t.Errorf("custom attack: recipe %v, %v successful", rep["recipe"], rep["successful"])
	}

	code, rep, stderr = run("--recipe", "pwws", "--protocol", "ftml", "--search", "greedy:order=unk")
	if code != 0 {
		t.Fatalf("pwws with a replaced search: exit %d: %s", code, stderr)
	}
	if d, _ := json.Marshal(rep["deviations"]); !strings.Contains(string(d), "not the pwws recipe: search greedy-wir(unk)") {
		t.Errorf("deviations %s: the replaced search must be declared", d)
	}
	if rep["recipe"] != "pwws+parts" {
		t.Errorf("recipe %v, want pwws+parts", rep["recipe"])
	}

	// The recipe rebuilt from its own parts gives the same results.
	vec := filepath.Join(dir, "vec.txt")
	writeVectors(t, vec)
	code, rep, stderr = run("--recipe", "textfooler", "--vectors", vec)
	if code != 0 {
		t.Fatalf("textfooler: exit %d: %s", code, stderr)
	}
	rebuilt := []string{"--recipe", "textfooler", "--vectors", vec, "--no-recipe-constraints", "--constraint", "repeat",
		"--constraint", "stopwords:list=textfooler", "--constraint", "embedding:max=0.5"}
	if strings.Contains(rep["description"].(string), "part-of-speech") { // WordNet is installed
		rebuilt = append(rebuilt, "--constraint", "pos")
	}
	code, rep2, stderr := run(append(rebuilt, "--constraint", "use")...)
	if code != 0 {
		t.Fatalf("textfooler from parts: exit %d: %s", code, stderr)
	}
	parts := func(r map[string]any) string { d := r["description"].(string); return d[strings.Index(d, "["):] }
	if parts(rep) != parts(rep2) {
		t.Errorf("rebuilt attack differs:\n %s\n %s", parts(rep), parts(rep2))
	}
	for _, k := range []string{"successful", "failed", "skipped", "avg_queries", "avg_perturbed_word_pct"} {
		if rep[k] != rep2[k] {
			t.Errorf("%s: recipe %v, rebuilt from parts %v", k, rep[k], rep2[k])
		}
	}

	// The gradient order runs on a real model's input gradients.
	code, rep, stderr = run("--recipe", "pwws", "--protocol", "ftml", "--search", "greedy:order=gradient")
	if code != 0 || rep["successful"].(float64) == 0 || !strings.Contains(rep["description"].(string), "greedy-wir(gradient)") {
		t.Errorf("gradient order: exit %d, %v: %s", code, rep, stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--transformation", "synonyms", "--search", "beam", "--constraint", "usee"}, `unknown constraint "usee" (valid: repeat, stopwords`},
		{[]string{"--transformation", "synonyms", "--search", "anneal"}, "unknown search \"anneal\" (valid: greedy, beam"},
		{[]string{"--search", "beam"}, "needs a transformation"},
		{[]string{"--transformation", "nearest", "--search", "beam"}, "needs word vectors (--vectors)"},
		{[]string{"--transformation", "synonyms", "--search", "genetic:size=3"}, "genetic: unknown parameter size (valid: gens, pop, temp)"},
		{nil, "or compose an attack with --transformation and --search"},
	} {
		if code, _, stderr := run(tc.args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestAttackRefusesOtherClassCount: a 2-class model attacked on 3-class
// data is a usage error naming both, not a panic or a meaningless number.
func TestAttackRefusesOtherClassCount(t *testing.T) {
	dir := t.TempDir()
	_, syn, mdir := attackFixture(t, dir)
	three := filepath.Join(dir, "three.csv")
	var b strings.Builder
	b.WriteString("text,label\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "\"the film was good number %d\",%d\n", i, i%3)
	}
	if err := os.WriteFile(three, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "attack", "--model", mdir, "--train", three, "--test", three, "--recipe", "textfooler",
		"--synonyms", syn, "--quiet")
	if code != 2 || !strings.Contains(stderr, "the data has 3 classes") || !strings.Contains(stderr, "the model 2") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestAttackResumeBelongsToItsRun: a results file resumes only with the
// settings that wrote it; another seed, recipe, protocol or model is
// refused naming the field, and so is a file without its run record.
func TestAttackResumeBelongsToItsRun(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	out := filepath.Join(dir, "res.csv")
	base := []string{"attack", "--model", mdir, "--test", te, "--synonyms", syn, "--out", out, "--quiet", "--n", "10"}
	if code, _, stderr := runCmd(t, append(base, "--recipe", "textfooler")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--recipe", "textfooler", "--seed", "1"}, "seed"},
		{[]string{"--recipe", "pso"}, "recipe"},
		{[]string{"--recipe", "textfooler", "--protocol", "flat"}, "protocol"},
	} {
		args := append(append(append([]string(nil), base...), c.extra...), "--resume")
		if code, _, stderr := runCmd(t, args...); code == 0 || !strings.Contains(stderr, "cannot resume") || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s", c.extra, code, stderr)
		}
	}
	// The same settings, and a larger --n, resume.
	if code, _, stderr := runCmd(t, append(append(base, "--recipe", "textfooler", "--resume"), "--n", "20")...); code != 0 {
		t.Errorf("same settings: exit %d: %s", code, stderr)
	}
	os.Remove(out + ".run.json")
	if code, _, stderr := runCmd(t, append(base, "--recipe", "textfooler", "--resume")...); code == 0 || !strings.Contains(stderr, "no record") {
		t.Errorf("file without its record: exit %d, %s", code, stderr)
	}
}

// TestUselessResourcesRefused: a synonym table without one neighbour, or
// a vectors file without one of the model's words, is an error, not a run
// in which every attack "fails" and accuracy under attack equals the clean
// accuracy.
func TestUselessResourcesRefused(t *testing.T) {
	dir := t.TempDir()
	te, _, mdir := attackFixture(t, dir)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"zzz": []}`), 0o644)
	code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--synonyms", empty, "--quiet")
	if code == 0 || !strings.Contains(stderr, "no word a neighbour") {
		t.Errorf("empty synonym table: exit %d, %s", code, stderr)
	}
	vec := filepath.Join(dir, "foreign.vec")
	os.WriteFile(vec, []byte("mot 0.1 0.2\nautre 0.3 0.4\n"), 0o644)
	syn := filepath.Join(dir, "syn.json")
	code, _, stderr = runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "textfooler", "--synonyms", syn, "--vectors", vec, "--quiet")
	if code == 0 || !strings.Contains(stderr, "none of the") {
		t.Errorf("foreign vectors: exit %d, %s", code, stderr)
	}
	tr := filepath.Join(dir, "train.csv")
	code, _, stderr = runCmd(t, "train", "--train", tr, "--embeddings", vec, "--epochs", "1", "--out", filepath.Join(dir, "m2"), "--quiet")
	if code == 0 || !strings.Contains(stderr, "none of the") {
		t.Errorf("train with foreign embeddings: exit %d, %s", code, stderr)
	}
}

// Two shards of an attack, merged, are the single run's results file
// (apart from each row's seconds), and a bad --shard is refused.
func TestAttackShardsMerge(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	run := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"attack", "--model", mdir, "--test", te, "--recipe", "pwws", "--protocol", "ftml", "--synonyms", syn,
			"--n", "9", "--workers", "2", "--out", out, "--quiet"}, extra...)
		if code, _, stderr := runCmd(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
	}
	single := filepath.Join(dir, "single.csv")
	run(single)
	s0, s1 := filepath.Join(dir, "s0.csv"), filepath.Join(dir, "s1.csv")
	run(s0, "--shard", "0/2")
	run(s1, "--shard", "1/2")
	merged := filepath.Join(dir, "merged.csv")
	code, stdout, stderr := runCmd(t, "merge", "--out", merged, s0, s1)
	if code != 0 || !strings.Contains(stdout, "9 examples from 2 shards") {
		t.Fatalf("merge: exit %d: %s %s", code, stdout, stderr)
	}
	blank := func(path string) string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range recs[1:] {
			r[8] = "" // seconds
			b.WriteString(strings.Join(r, "\x1f") + "\n")
		}
		return b.String()
	}
	if blank(merged) != blank(single) {
		t.Errorf("merged rows differ from the single run's:\n%s\nwant\n%s", blank(merged), blank(single))
	}
	for _, bad := range []string{"2/2", "a/b", "-1/3", "1/0"} {
		if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "pwws", "--protocol", "ftml", "--synonyms", syn, "--shard", bad); code != 2 {
			t.Errorf("--shard %s: exit %d: %s", bad, code, stderr)
		}
	}
}
