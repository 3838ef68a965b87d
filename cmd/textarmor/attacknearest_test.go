package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/internal/synth"
)

// writeVectors writes GloVe-style text vectors for the generated task: the
// words of a synonym group lie close to the group's own random direction,
// the neutral words are random. Each group also has a word the task never
// uses ("<first word>ish"), a substitute outside the model vocabulary.
func writeVectors(t testing.TB, path string) {
	t.Helper()
	const dim = 12
	rng := rand.New(rand.NewSource(7))
	randVec := func() []float64 {
		v := make([]float64, dim)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	var b strings.Builder
	put := func(w string, v []float64) {
		b.WriteString(w)
		for _, x := range v {
			fmt.Fprintf(&b, " %.5f", x)
		}
		b.WriteByte('\n')
	}
	lex := synth.DefaultLexicon()
	for _, groups := range [][][]string{lex.Positive, lex.Negative} {
		for _, g := range groups {
			base := randVec()
			for _, w := range append(slices.Clone(g), g[0]+"ish") {
				v := randVec()
				for i := range v {
					v[i] = base[i] + 0.2*v[i]
				}
				put(w, v)
			}
		}
	}
	for _, w := range lex.Neutral {
		put(w, randVec())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAttackVectorsNearestAndShow(t *testing.T) {
	dir := t.TempDir()
	te, syn, mdir := attackFixture(t, dir)
	vec := filepath.Join(dir, "vec.txt")
	writeVectors(t, vec)
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	attackRun := func(recipe, out string, extra ...string) (map[string]any, string) {
		t.Helper()
		// No --synonyms and no --data: the substitutes must come from --vectors.
		args := append([]string{"attack", "--model", mdir, "--test", te, "--recipe", recipe, "--vectors", vec,
			"--n", "20", "--workers", "2", "--json", "--quiet", "--out", filepath.Join(runs, out)}, extra...)
		code, stdout, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("--json output %q: %v", stdout, err)
		}
		return rep, stderr
	}
	devs := func(rep map[string]any) string {
		b, _ := json.Marshal(rep["deviations"])
		return string(b)
	}

	rep, stderr := attackRun("textfooler", "a.csv", "--show", "--color", "never")
	if strings.Contains(devs(rep), "substitutes") {
		t.Errorf("textfooler with --vectors (k=50, cos 0.5) still lists a substitute deviation: %s", devs(rep))
	}
	if !strings.Contains(stderr, "nearest neighbours:") || strings.Contains(stderr, "cached in") {
		t.Errorf("first run should compute the table: %s", stderr)
	}
	if got := strings.Count(stderr, "--- example "); got != 20 {
		t.Errorf("--show printed %d examples, want 20:\n%s", got, stderr)
	}
	if rep["successful"].(float64) > 0 && !strings.Contains(stderr, "[[") {
		t.Errorf("--show --color never: no [[word]] marks:\n%s", stderr)
	}
	if strings.Contains(stderr, "\x1b[") {
		t.Errorf("--color never wrote escape codes")
	}
	cached, _ := filepath.Glob(filepath.Join(runs, "knn-*-k50-cos0.5.json"))
	if len(cached) != 1 {
		t.Fatalf("neighbour cache next to --out: %v", cached)
	}

	// Second run: the cache is used, and the results are the same.
	rep2, stderr2 := attackRun("textfooler", "b.csv")
	if !strings.Contains(stderr2, "cached in") {
		t.Errorf("second run did not use the cache: %s", stderr2)
	}
	for _, k := range []string{"successful", "failed", "skipped", "avg_queries"} {
		if rep[k] != rep2[k] {
			t.Errorf("%s: %v with a fresh table, %v from the cache", k, rep[k], rep2[k])
		}
	}

	// GA takes Alzantot's k = 8, cosine ≥ 0.75 unless told otherwise.
	rep, _ = attackRun("ga", "c.csv")
	if d := devs(rep); !strings.Contains(d, "cosine ≥ 0.75 (the same for unit vectors") {
		t.Errorf("ga deviations: %s", d)
	}
	if cached, _ := filepath.Glob(filepath.Join(runs, "knn-*-k8-cos0.75.json")); len(cached) != 1 {
		t.Errorf("ga cache: %v", cached)
	}
	rep, _ = attackRun("pso", "d.csv", "--nn-k", "5", "--nn-cos", "0.6")
	if d := devs(rep); !strings.Contains(d, "the 5 nearest neighbours with cosine ≥ 0.6 in vec.txt instead of HowNet") {
		t.Errorf("pso deviations: %s", d)
	}

	// --shuffle draws the same seeded sample as --protocol ftml.
	indexes := func(name string) string {
		rs, _, err := attack.ReadCSV(filepath.Join(runs, name))
		if err != nil {
			t.Fatal(err)
		}
		var ix []int
		for _, r := range rs {
			ix = append(ix, r.Index)
		}
		return fmt.Sprint(ix)
	}
	attackRun("pso", "e.csv", "--n", "6", "--shuffle", "--seed", "4")
	attackRun("pso", "f.csv", "--n", "6")
	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "ga", "--protocol", "ftml", "--synonyms", syn,
		"--n", "6", "--seed", "4", "--quiet", "--out", filepath.Join(runs, "g.csv")); code != 0 {
		t.Fatalf("ftml: %s", stderr)
	}
	if e, f, g := indexes("e.csv"), indexes("f.csv"), indexes("g.csv"); e != g || f != "[0 1 2 3 4 5]" {
		t.Errorf("--shuffle sample %s, ftml sample %s, first n %s", e, g, f)
	}

	// FTML still needs the counter-fitted sets.
	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "ga", "--protocol", "ftml",
		"--vectors", vec, "--n", "2", "--quiet"); code == 0 || !strings.Contains(stderr, "synonyms") {
		t.Errorf("ftml ga without --synonyms: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "ga", "--vectors", vec,
		"--nn-k", "0", "--quiet"); code != 2 {
		t.Errorf("--nn-k 0: exit %d %s", code, stderr)
	}
	if code, _, _ := runCmd(t, "attack", "--model", mdir, "--test", te, "--recipe", "ga", "--vectors", vec,
		"--show", "--color", "purple", "--quiet"); code != 2 {
		t.Errorf("--color purple: exit %d", code)
	}
}
