package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/internal/progress"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
)

// AttackConfig is one `textarmor attack` run: a model attacked on a split
// with a recipe (or an attack composed from parts), resumably, with an
// optional interpretation-agreement pass. Comments name the CLI flags.
type AttackConfig struct {
	Model string // model directory written by `textarmor train` (--model; required without Victim)
	// Victim is, instead of Model, the URL of a model behind an HTTP
	// endpoint speaking the remote victim protocol (attack.RemoteModel;
	// --victim), queried with Remote's batching, concurrency, retries and
	// budget (--victim-batch, --victim-concurrency, --victim-timeout,
	// --victim-retries, --victim-budget).
	Victim string
	Remote attack.RemoteOptions
	// Data and Split are the examples (--split; "" = test). A bare
	// Data.Test file (no preset, no training file) is read with the
	// model's classes and Split does not apply (Data.ForModel).
	Data  Data
	Split string
	// Recipe is a published attack (attack.RecipeNames; --recipe) run
	// under Protocol: "" (the paper's own), ftml or flat (--protocol).
	// Parts replace or add parts of it (--goal, --transformation,
	// --search, --constraint, --no-recipe-constraints), or, without a
	// recipe, compose the whole attack.
	Recipe, Protocol string
	Parts            attack.Parts
	// N attacks this many examples, 0 = the whole split (--n): under the
	// FTML protocol, or with Shuffle (--shuffle), a seeded random sample,
	// otherwise the first N.
	N       int
	Shuffle bool
	// Shard "i/n" attacks shard i of n of the selected examples (those at
	// positions i, i+n, …; attack.ShardExamples); MergeAttackShards joins
	// the n results files into the single run's. "" = all.
	Shard string
	Seed  int64 // with the example index, seeds each example's attack (--seed)
	// QueryBudget stops an example after this many model queries (result
	// Failed); 0 = no limit (--query-budget).
	QueryBudget int
	Workers     int // examples attacked in parallel; results do not depend on it (--workers)
	// CSV is the per-example results file, one fsynced row per example
	// (--out). It is locked for the run; an existing one is refused
	// unless Resume (--resume), which skips the examples it holds when it
	// was written by the same settings.
	CSV    string
	Resume bool
	// MergeBatches merges the full forward passes of the examples in
	// flight into one model call (--merge-batches); NoIncremental scores
	// every candidate with a full forward pass (--no-incremental). Neither
	// changes the results.
	MergeBatches, NoIncremental bool
	// Synonyms is the counter-fitted neighbour JSON ("" = the one under
	// Data.Dir), WordNet the WordNet dict folder, Vectors word vectors,
	// LM a language model for ga (--synonyms, --wordnet, --vectors, --lm);
	// MLM a Hugging Face directory with a masked-LM head and
	// SentenceEncoder a transformer sentence encoder, for bae and
	// bert-attack (--mlm, --sentence-encoder).
	Synonyms, WordNet, Vectors, LM string
	MLM, SentenceEncoder           string
	Nearest                        NearestConfig
	Explain                        ExplainConfig
	Progress                       io.Writer // per-example progress line (nil = none)
	Log                            io.Writer // what is loaded, built and declared (nil = discard)
	// Show, when set, receives each attacked example with its substituted
	// words marked (attack.Result.Show), in colour with ShowColor (--show,
	// --color).
	Show      io.Writer
	ShowColor bool
	// OnResult, when set, is called with each result in input order.
	OnResult func(attack.Result)
}

// NewAttackConfig returns the CLI's defaults: the test split, one worker
// per CPU, the default WordNet folder, the nearest-neighbour and explain
// defaults.
func NewAttackConfig() AttackConfig {
	return AttackConfig{Data: NewData(), Split: "test", Workers: runtime.NumCPU(), WordNet: lexicon.DefaultWordNetDir(),
		Nearest: NewNearestConfig(), Explain: NewExplainConfig(), Remote: attack.RemoteOptions{Batch: attack.DefaultRemoteBatch,
			Concurrency: attack.DefaultRemoteConcurrency, Timeout: attack.DefaultRemoteTimeout, Retries: attack.DefaultRemoteRetries}}
}

// Check validates the configuration: numbers first, then the names and
// the settings that contradict each other.
func (c *AttackConfig) Check() error {
	maxWorkers := max(4096, runtime.NumCPU())
	switch {
	case c.N < 0:
		return configErrorf("--n %d must be ≥ 0 (0 = the whole split)", c.N)
	case c.QueryBudget < 0:
		return configErrorf("--query-budget %d must be ≥ 0 (0 = no limit)", c.QueryBudget)
	case c.Workers < 1 || c.Workers > maxWorkers:
		return configErrorf("--workers %d must be in [1, %d]", c.Workers, maxWorkers)
	}
	if err := c.Nearest.Check(); err != nil {
		return err
	}
	if _, _, err := parseShard(c.Shard); err != nil {
		return err
	}
	if err := c.checkRemote(); err != nil {
		return err
	}
	if err := c.Explain.checkNumbers(); err != nil {
		return err
	}
	if err := c.Data.Check(); err != nil {
		return err
	}
	switch {
	case c.Model == "" && c.Victim == "":
		return configErrorf("--model is required (or --victim URL, a model behind an HTTP endpoint)")
	case c.Model != "" && c.Victim != "":
		return configErrorf("give --model or --victim, not both")
	case c.Victim != "" && c.Explain.Method != "":
		return configErrorf("--explain needs the model's gradients: it cannot explain a --victim behind an endpoint")
	}
	rc, err := c.recipe()
	if err != nil {
		return err
	}
	switch c.Protocol {
	case attack.ProtocolPaper, attack.ProtocolFTML, attack.ProtocolFLAT:
	default:
		return configErrorf("--protocol %q: want ftml or flat (or leave it out)", c.Protocol)
	}
	if err := c.Explain.checkNames(); err != nil {
		return err
	}
	if c.Resume && c.CSV == "" {
		return configErrorf("--resume needs --out")
	}
	switch {
	case c.Recipe != "" && c.recipeLM(rc) != "" && !rc.Needs(c.Protocol).LM:
		return &ConfigError{errLMOnlyGA}
	case c.Recipe == "" && c.LM != "" && !partsUseLM(c.Parts):
		return configErrorf("--lm is used by --recipe ga (alzantot) and by --constraint lm-top")
	}
	return nil
}

// recipe looks Recipe up; without one, Parts must compose an attack (the
// zero Recipe is returned).
func (c *AttackConfig) recipe() (attack.Recipe, error) {
	if c.Recipe == "" {
		if c.Parts.Empty() {
			return attack.Recipe{}, configErrorf("--recipe is required (valid: %s), or compose an attack with --transformation and --search",
				strings.Join(attack.RecipeNames(), ", "))
		}
		return attack.Recipe{}, nil
	}
	rc, err := attack.LookupRecipe(c.Recipe)
	if err != nil {
		return rc, &ConfigError{err}
	}
	return rc, nil
}

// recipeLM is the language model the recipe itself gets: an lm-top
// constraint takes LM instead, except from ga, whose own filter it is.
func (c *AttackConfig) recipeLM(rc attack.Recipe) string {
	if partsUseLM(c.Parts) && rc.Name != "ga" {
		return ""
	}
	return c.LM
}

// AttackReport is what an attack run found.
type AttackReport struct {
	Summary   attack.Summary
	Results   []attack.Result    // in example order
	Agreement *explain.Agreement // the explain pass's (nil without one)
	// Recipe, Protocol, Description and Deviations describe the attack run
	// (attack.Configured): Deviations lists how it differs from the paper
	// or protocol it names.
	Recipe, Protocol, Description string
	Deviations                    []string
	// PostConstraints names the attack's post-transformation constraints,
	// in the order of Summary.PostPass.
	PostConstraints []string
	// Model, Dataset (its name), Split, Seed and CSV say what was
	// attacked and where the rows are.
	Model, Dataset, Split, CSV string
	Seed                       int64
	// Truncated counts the attacked texts longer than the model's MaxLen
	// tokens: it reads them truncated.
	Truncated, MaxLen int
	Wall              time.Duration // the attack and explain pass, loading excluded
}

// Attack runs the attack c describes: it loads the model, the examples
// and the resources the attack needs, builds it, attacks every example
// (resuming c.CSV when asked) and, with c.Explain.Method, scores the
// interpretation agreement of the successful attacks.
func Attack(ctx context.Context, c AttackConfig) (*AttackReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	if c.Split == "" {
		c.Split = "test"
	}
	rc, _ := c.recipe() // Check looked it up
	nearest := c.Nearest.resolve(rc.Needs(c.Protocol))
	if c.CSV != "" {
		// One run per results file: two attacks appending to one CSV
		// would leave duplicate and interleaved rows.
		unlock, err := checkpoint.LockOutput(c.CSV)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if _, err := os.Stat(c.CSV); err == nil && !c.Resume {
			return nil, configErrorf("%s exists: use --resume to continue that run, or remove it", c.CSV)
		}
	}
	m, remote, err := c.victim(ctx, log)
	if err != nil {
		return nil, err
	}
	ex, dsName, err := c.Data.ForModel(m, c.Split, log)
	if err != nil {
		return nil, err
	}
	if c.Explain.Method != "" {
		if err := refusePairModel(m, "--explain"); err != nil {
			return nil, err
		}
	}
	items := attack.ExamplesOf(ex, attack.SampleOrder(len(ex), c.N, c.Seed, c.Protocol == attack.ProtocolFTML || c.Shuffle))
	if si, sn, _ := parseShard(c.Shard); sn > 0 {
		items = attack.ShardExamples(items, si, sn)
		fmt.Fprintf(log, "shard %d of %d: %d of the selected examples\n", si, sn, len(items))
	}
	rep := &AttackReport{Protocol: c.Protocol, Model: cmp.Or(c.Model, c.Victim), Dataset: dsName, Split: c.Split, CSV: c.CSV, Seed: c.Seed, MaxLen: m.MaxLen}
	if m.Pairs() {
		fmt.Fprintf(log, "sentence pairs: the attack modifies the second text (hypothesis, second sentence) and the model reads it with the fixed first\n")
	}
	for _, it := range items {
		var dropped int
		if it.Fixed != "" {
			_, dropped = m.EncodePairCounted(it.Fixed, it.Text)
		} else {
			_, dropped = m.EncodeCounted(it.Text)
		}
		if dropped > 0 {
			rep.Truncated++
		}
	}
	if rep.Truncated > 0 {
		fmt.Fprintf(log, "%d of %d texts are longer than the model's %d tokens: it reads them truncated\n", rep.Truncated, len(items), m.MaxLen)
	}
	// A transformer's (or a remote victim's) word vocabulary is open: the
	// substitute tables built below (nearest neighbours, the FTML
	// protocol's restriction) must cover the attacked texts' words.
	for _, it := range items {
		m.AddWords(it.Text)
	}

	cfg, err := c.build(rc, m, AttackResources{Synonyms: c.Synonyms, DataDir: c.Data.Dir, WordNet: c.WordNet, Vectors: c.Vectors,
		LM: c.LM, MLM: c.MLM, SentenceEncoder: c.SentenceEncoder, QueryBudget: c.QueryBudget, Nearest: nearest, CacheDir: NearestCacheDir(c.CSV), Log: log})
	if err != nil {
		return nil, err
	}
	rep.Recipe, rep.Description, rep.Deviations = cfg.Recipe, cfg.Description, cfg.Deviations
	for _, pc := range cfg.Post {
		rep.PostConstraints = append(rep.PostConstraints, pc.Name())
	}
	fmt.Fprintf(log, "attack %s (protocol %q): %s\n", cfg.Recipe, c.Protocol, cfg.Description)
	for _, d := range cfg.Deviations {
		fmt.Fprintf(log, "deviation: %s\n", d)
	}
	opt := attack.RunOptions{Workers: c.Workers, Seed: c.Seed, CSV: c.CSV, Resume: c.Resume, MergeBatches: c.MergeBatches,
		Progress: c.Progress, OnResult: c.onResult(m.Classes)}
	if c.CSV != "" {
		digest, err := c.victimDigest(remote)
		if err != nil {
			return nil, err
		}
		// N is left out on purpose: the examples come in an order fixed by
		// the dataset, split, seed and sampling, and each one's result by
		// its index, so a run of another N reuses the rows it shares.
		opt.Identity = map[string]string{"model": digest, "recipe": cfg.Recipe, "attack": cfg.Description,
			"protocol": c.Protocol, "seed": fmt.Sprint(c.Seed), "dataset": dsName, "split": c.Split,
			"shuffle": fmt.Sprint(c.Shuffle), "examples": fmt.Sprint(len(ex)), "query_budget": fmt.Sprint(c.QueryBudget),
			"vectors": c.Vectors, "synonyms": c.Synonyms, "lm": c.LM}
		if c.Shard != "" {
			opt.Identity[attack.ShardKey] = c.Shard
		}
	}
	tg := attack.FromModel(m)
	if remote != nil {
		tg = remote.Target(m.Vocab, m.Tok)
	}
	tg.NoIncremental = c.NoIncremental
	start := time.Now()
	rep.Results, err = attack.RunAll(ctx, cfg.Attack, tg, items, opt)
	if remote != nil {
		fmt.Fprintf(log, "remote victim %s: %d texts sent in %d requests, %d retries\n", c.Victim, remote.Sent(), remote.Requests(), remote.Retries())
	}
	if err != nil {
		return nil, err
	}
	rep.Summary = attack.Summarize(rep.Results)
	if c.Explain.Method != "" {
		var j explainJournal
		if c.CSV != "" {
			// Keep the pairs' scores beside the CSV so that a stopped
			// explain pass resumes as the attack does.
			j = explainJournal{path: c.Explain.journalPath(c.CSV), modelDigest: opt.Identity["model"], resume: c.Resume}
		}
		if rep.Agreement, err = c.Explain.agreement(m, rep.Results, c.Seed, c.Workers, j); err != nil {
			return nil, err
		}
	}
	rep.Wall = time.Since(start)
	return rep, nil
}

// build makes the attack: the recipe with its resources, then the parts
// composed onto it (or, without a recipe, the parts alone).
func (c *AttackConfig) build(rc attack.Recipe, m *model.Model, in AttackResources) (*attack.Configured, error) {
	var cfg *attack.Configured
	if c.Recipe != "" {
		base := in
		base.LM = c.recipeLM(rc)
		var err error
		if cfg, err = BuildRecipe(rc, c.Protocol, m, base); err != nil {
			return nil, err
		}
	}
	if c.Parts.Empty() {
		return cfg, nil
	}
	res, err := partResources(c.Parts, c.Protocol, m, in)
	if err != nil {
		return nil, err
	}
	if cfg, err = attack.Compose(cfg, c.Protocol, c.Parts, res); err != nil {
		return nil, &ConfigError{err}
	}
	return cfg, nil
}

// onResult is the per-result hook: the Show printer, then OnResult.
func (c *AttackConfig) onResult(classes []string) func(attack.Result) {
	if c.Show == nil {
		return c.OnResult
	}
	// A status line being redrawn on a terminal needs closing first.
	openLine := c.Progress != nil && progress.IsTerminal(c.Progress)
	return func(r attack.Result) {
		s := r.Show(classes, c.ShowColor)
		if openLine {
			s = "\n" + s
		}
		io.WriteString(c.Show, s)
		if c.OnResult != nil {
			c.OnResult(r)
		}
	}
}

// Mismatched lists the example indices of successes whose written text,
// read back, does not fool the model (a bug; see attack.CheckResults).
func (r *AttackReport) Mismatched() []int {
	var out []int
	for _, res := range r.Results {
		if res.Check == attack.Mismatch {
			out = append(out, res.Index)
		}
	}
	return out
}

// JSON is the object `textarmor attack --json` prints: the summary's
// fields, the binomial standard error of the accuracy under attack, the
// explain pass's agreement, and what was attacked how.
func (r *AttackReport) JSON() map[string]any {
	obj := map[string]any{}
	b, _ := json.Marshal(r.Summary)
	// Summary is a struct of numbers: it marshals and reads back.
	_ = json.Unmarshal(b, &obj)
	obj["wall_seconds"] = r.Wall.Seconds()
	// The binomial standard error of the after-attack accuracy over the n
	// attacked examples.
	obj["accuracy_under_attack_se"] = metrics.BinomialSE(r.Summary.AccuracyUnderAttack, r.Summary.N)
	if a := r.Agreement; a != nil {
		obj["explain"], obj["kendall_tau"], obj["topk_intersection"] = a, a.KendallTau, a.TopK
		obj["kendall_tau_se"], obj["topk_intersection_se"] = a.KendallTauSE, a.TopKSE
	}
	deviations := r.Deviations
	if deviations == nil {
		deviations = []string{}
	}
	obj["recipe"], obj["protocol"], obj["description"], obj["deviations"] = r.Recipe, r.Protocol, r.Description, deviations
	obj["model"], obj["dataset"], obj["split"], obj["seed"], obj["out"] = r.Model, r.Dataset, r.Split, r.Seed, r.CSV
	obj["truncated"] = r.Truncated
	delete(obj, "post_pass")
	if pass := r.postPass(); len(pass) > 0 {
		obj["post_pass"] = pass
	}
	return obj
}

// PostPass is one post-transformation constraint's tally, named.
type PostPass struct {
	Constraint string `json:"constraint"`
	attack.ConstraintPass
}

// postPass names the summary's per-constraint tallies.
func (r *AttackReport) postPass() []PostPass {
	var out []PostPass
	for k, p := range r.Summary.PostPass {
		name := fmt.Sprintf("post[%d]", k)
		if k < len(r.PostConstraints) {
			name = r.PostConstraints[k]
		}
		out = append(out, PostPass{name, p})
	}
	return out
}

// parseShard reads --shard "i/n" (0 ≤ i < n); "" is no sharding (n 0).
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != s || n < 1 || i < 0 || i >= n {
		return 0, 0, configErrorf("--shard %q: want i/n with 0 ≤ i < n (shard 0/4 is the first of four)", s)
	}
	return i, n, nil
}

// MergeAttackShards joins the results files of shards 0 … n−1 of one
// attack run (in shard order) into out, the single run's file, and
// summarises it (attack.MergeShards).
func MergeAttackShards(out string, shards []string) (attack.Summary, error) {
	if out == "" || len(shards) == 0 {
		return attack.Summary{}, configErrorf("merge needs --out FILE and the shards' results files, in shard order")
	}
	rs, err := attack.MergeShards(shards, out)
	if err != nil {
		return attack.Summary{}, err
	}
	return attack.Summarize(rs), nil
}
