package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// attackFixture writes into dir what an attack needs, all generated: a
// small CNN trained on a synthetic sentiment task (dir/model), 40 test
// texts (dir/test.csv) and the task's synonym table (dir/syn.json).
func attackFixture(dir string) (mdir, testCSV, synonyms string, err error) {
	mdir, testCSV, synonyms = filepath.Join(dir, "model"), filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json")
	ds := synth.SentimentDataset(300, 0, 40, 1)
	var csv strings.Builder
	csv.WriteString("text,label\n")
	for _, e := range ds.Test {
		fmt.Fprintf(&csv, "%q,%d\n", e.Text, e.Label)
	}
	if err = os.WriteFile(testCSV, []byte(csv.String()), 0o644); err != nil {
		return
	}
	table, _ := json.Marshal(synth.DefaultLexicon().Synonyms())
	if err = os.WriteFile(synonyms, table, 0o644); err != nil {
		return
	}
	tok, err := text.NewTokenizer("flat")
	if err != nil {
		return
	}
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 16, 8
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "flat", MaxLen: 50, Classes: ds.Classes},
		train.BuildVocab(tok, ds.Train, 1, 0), rand.New(rand.NewSource(1)))
	if err != nil {
		return
	}
	_, err = train.Run(m, train.Standard{}, train.Encode(m, ds.Train), nil,
		train.Options{Epochs: 3, BatchSize: 32, LR: 0.01, Seed: 1, Out: mdir})
	return
}

// Attack a model with PWWS under the FTML protocol and keep the results
// in a CSV that a later run can resume.
func ExampleAttack() {
	dir, err := os.MkdirTemp("", "attack-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	mdir, testCSV, synonyms, err := attackFixture(dir)
	if err != nil {
		log.Fatal(err)
	}

	c := pipeline.NewAttackConfig()
	c.Model, c.Data.Test, c.Synonyms = mdir, testCSV, synonyms
	c.Recipe, c.Protocol = "pwws", attack.ProtocolFTML
	c.N, c.Workers, c.CSV = 20, 2, filepath.Join(dir, "pwws.csv")
	rep, err := pipeline.Attack(context.Background(), c)
	if err != nil {
		log.Fatal(err)
	}
	s := rep.Summary
	fmt.Printf("%s (protocol %s) on %s/%s: %d examples\n", rep.Recipe, rep.Protocol, rep.Dataset, rep.Split, s.N)
	fmt.Printf("every success verified: %v\n", s.Verified == s.Successful)
	fmt.Printf("accuracy under attack below the original: %v\n", s.AccuracyUnderAttack < s.OriginalAccuracy)

	// The same settings resume the finished run: nothing is attacked again.
	c.Resume = true
	again, err := pipeline.Attack(context.Background(), c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("resumed: same summary: %v\n", again.Summary.Successful == s.Successful && again.Summary.Failed == s.Failed)
	// Output:
	// pwws (protocol ftml) on test.csv/test: 20 examples
	// every success verified: true
	// accuracy under attack below the original: true
	// resumed: same summary: true
}

// Check refuses a configuration that cannot run with a *ConfigError
// naming the CLI flag, before anything is read.
func TestAttackConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		edit func(*pipeline.AttackConfig)
		want string
	}{
		{func(c *pipeline.AttackConfig) { c.N = -1 }, "--n -1 must be ≥ 0"},
		{func(c *pipeline.AttackConfig) { c.QueryBudget = -2 }, "--query-budget -2 must be ≥ 0"},
		{func(c *pipeline.AttackConfig) { c.Workers = 0 }, "--workers 0 must be in [1, "},
		{func(c *pipeline.AttackConfig) { c.Nearest.K = 0 }, "--nn-k 0 must be at least 1"},
		{func(c *pipeline.AttackConfig) { c.Nearest.Cos = 2 }, "--nn-cos 2 must be a cosine in [-1, 1]"},
		{func(c *pipeline.AttackConfig) { c.Nearest.Vocab = -1 }, "--nn-vocab -1 must be ≥ 0"},
		{func(c *pipeline.AttackConfig) { c.Explain.K = 0 }, "--explain-k 0 must be at least 1"},
		{func(c *pipeline.AttackConfig) { c.Explain.Pairs = -1 }, "--explain-pairs -1 must be ≥ 0"},
		{func(c *pipeline.AttackConfig) { c.Model = "" }, "--model is required"},
		{func(c *pipeline.AttackConfig) { c.Recipe = "" }, "--recipe is required (valid: bae, bert-attack, ga, hla, iga, pso, pwws, textbugger, textfooler)"},
		{func(c *pipeline.AttackConfig) { c.Recipe = "nope" }, `unknown recipe "nope"`},
		{func(c *pipeline.AttackConfig) { c.Protocol = "x" }, `--protocol "x": want ftml or flat`},
		{func(c *pipeline.AttackConfig) { c.Explain.Method = "shap" }, `--explain "shap": want ig or lime`},
		{func(c *pipeline.AttackConfig) { c.Explain.Label = "pred" }, `--explain-label "pred": want all or gold`},
		{func(c *pipeline.AttackConfig) { c.Resume = true }, "--resume needs --out"},
		{func(c *pipeline.AttackConfig) { c.LM = "x.lm" }, "--lm is used only by --recipe ga (alzantot) without --protocol ftml"},
		{func(c *pipeline.AttackConfig) { c.Recipe, c.Protocol, c.LM = "alzantot", attack.ProtocolFTML, "x.lm" }, "--lm is used only by"},
		{func(c *pipeline.AttackConfig) {
			c.Recipe, c.LM, c.Parts = "", "x.lm", attack.Parts{Transformation: "synonyms", Search: "greedy"}
		}, "--lm is used by --recipe ga (alzantot) and by --constraint lm-top"},
	} {
		c := pipeline.NewAttackConfig()
		c.Model, c.Recipe = "m", "pwws"
		tc.edit(&c)
		err := c.Check()
		var ce *pipeline.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v (%T)", tc.want, err, err)
		}
		if _, err := pipeline.Attack(context.Background(), c); !errors.As(err, &ce) {
			t.Errorf("%q: Attack did not check: %v", tc.want, err)
		}
	}
	// What the CLI accepts.
	for _, edit := range []func(*pipeline.AttackConfig){
		func(c *pipeline.AttackConfig) {},
		func(c *pipeline.AttackConfig) { c.Recipe, c.LM = "ga", "x.lm" },
		func(c *pipeline.AttackConfig) {
			c.Recipe, c.Parts = "", attack.Parts{Transformation: "synonyms", Search: "beam"}
		},
		func(c *pipeline.AttackConfig) {
			c.LM, c.Parts = "x.lm", attack.Parts{Constraints: []string{"lm-top:n=2"}} // the constraint takes it
		},
	} {
		c := pipeline.NewAttackConfig()
		c.Model, c.Recipe = "m", "pwws"
		edit(&c)
		if err := c.Check(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// One Attack call: Show and OnResult see every result in order, Log gets
// the attack's description, JSON is the CLI's object, and an existing CSV
// is refused without Resume.
func TestAttackHooksAndJSON(t *testing.T) {
	dir := t.TempDir()
	mdir, testCSV, synonyms, err := attackFixture(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := pipeline.NewAttackConfig()
	c.Model, c.Data.Test, c.Synonyms = mdir, testCSV, synonyms
	c.Recipe, c.Protocol, c.N, c.Workers = "textfooler", attack.ProtocolFLAT, 12, 2
	c.CSV = filepath.Join(dir, "tf.csv")
	var show, logged bytes.Buffer
	var seen []int
	c.Show, c.Log = &show, &logged
	c.OnResult = func(r attack.Result) { seen = append(seen, r.Index) }
	rep, err := pipeline.Attack(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[0 1 2 3 4 5 6 7 8 9 10 11]" || strings.Count(show.String(), "--- example ") != 12 {
		t.Errorf("OnResult saw %v; Show wrote\n%s", seen, show.String())
	}
	if rep.Summary.Successful > 0 && !strings.Contains(show.String(), "[[") {
		t.Errorf("Show without colour marks no word:\n%s", show.String())
	}
	if !strings.Contains(logged.String(), `attack textfooler (protocol "flat"): `) {
		t.Errorf("log: %s", logged.String())
	}
	obj := rep.JSON()
	for _, k := range []string{"n", "successful", "failed", "skipped", "original_accuracy", "accuracy_under_attack",
		"accuracy_under_attack_se", "attack_success_rate", "avg_perturbed_word_pct", "avg_queries", "avg_queries_with_repeats",
		"avg_num_words", "seconds", "seconds_per_example", "verified", "mismatched", "wall_seconds", "recipe", "protocol",
		"description", "deviations", "model", "dataset", "split", "seed", "out", "truncated"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if len(obj) != 28 || obj["recipe"] != "textfooler" || obj["out"] != c.CSV || obj["n"] != float64(12) {
		t.Errorf("JSON %v", obj)
	}
	// The POS constraint's tally: it judged some substituted texts and
	// refused some (the generated task has words of several tags).
	if pp, _ := obj["post_pass"].([]pipeline.PostPass); len(pp) != 1 || !strings.HasPrefix(pp[0].Constraint, "part-of-speech") ||
		pp[0].Checked == 0 || pp[0].Passed > pp[0].Checked {
		t.Errorf("post_pass %v", obj["post_pass"])
	}
	if _, err := json.Marshal(obj); err != nil {
		t.Error(err)
	}
	_, err = pipeline.Attack(context.Background(), c)
	var ce *pipeline.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "exists: use --resume") {
		t.Errorf("existing CSV without Resume: %v", err)
	}
}
