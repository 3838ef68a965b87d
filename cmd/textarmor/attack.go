package main

import (
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
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

func runAttack(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("attack", "attack --model DIR --recipe NAME (--dataset NAME | --test FILE) [flags]", stderr)
	var df dataFlags
	df.register(fs, false)
	var path, recipeName, splitName, protocol, synPath, wnDir, out, blasName, vecPath, lmPath string
	var n, budget, workers int
	var seed int64
	var asJSON, resume, quiet bool
	fs.StringVar(&path, "model", "", "model directory written by 'textarmor train' (required)")
	fs.StringVar(&recipeName, "recipe", "", "attack recipe: "+strings.Join(attack.RecipeNames(), ", ")+" (required)")
	fs.StringVar(&splitName, "split", "test", "split to attack: train, dev or test")
	fs.IntVar(&n, "n", 0, "attack this many examples (0 = the whole split); ftml protocol: a seeded random sample, otherwise the first n")
	fs.Int64Var(&seed, "seed", 0, "random seed (with the example index it seeds each example's attack)")
	fs.IntVar(&budget, "query-budget", 0, "stop an example after this many model queries (result Failed); 0 = no limit")
	fs.IntVar(&workers, "workers", runtime.NumCPU(), "examples attacked in parallel (results do not depend on it)")
	fs.StringVar(&out, "out", "", "per-example results CSV (TextAttack's columns), one fsynced row per example")
	fs.BoolVar(&resume, "resume", false, "continue the run recorded in --out, skipping the examples it already has")
	fs.BoolVar(&asJSON, "json", false, "print the summary as one JSON object")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&protocol, "protocol", "", "evaluation protocol: ftml or flat (default: the paper's own recipe)")
	fs.StringVar(&synPath, "synonyms", "", "counter-fitted neighbour JSON (default: counterfitted-neighbors-jia2019/counterfitted_neighbors.json under --data)")
	fs.StringVar(&wnDir, "wordnet", lexicon.DefaultWordNetDir(), "WordNet dict directory (pwws without a protocol, or flat)")
	fs.StringVar(&vecPath, "vectors", "", "word vectors (e.g. counter-fitted, GloVe text format): textfooler's cosine ≥ 0.5 check and, as the documented USE stand-in, mean word-vector cosine for textfooler/hla (hla default: the model's embedding table)")
	fs.StringVar(&lmPath, "lm", "", "language model from 'textarmor lm train' for ga (alzantot) without --protocol ftml: keeps the best 4 substitutes per position in context, the paper's filter (default: none, a declared deviation)")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	var nf nearestFlags
	nf.register(fs)
	var sf showFlags
	sf.register(fs)
	shuffle := fs.Bool("shuffle", false, "attack a seeded random sample of --n examples, as --protocol ftml does, instead of the first n (which may all have one label: IMDB's test split is sorted)")
	mergeB := fs.Bool("merge-batches", false, "merge the full forward passes of the examples in flight (--workers > 1) into one model call (same results)")
	var ef explainFlags
	ef.register(fs)
	noInc := fs.Bool("no-incremental", false, "score every candidate with a full forward pass (off: candidates close to the current text are re-evaluated incrementally; same results, faster)")
	var parts attack.Parts
	var constraints specList
	fs.StringVar(&parts.Goal, "goal", "", "replace the recipe's goal: "+strings.Join(attack.GoalNames, ", ")+" (targeted:class=N)")
	fs.StringVar(&parts.Transformation, "transformation", "", "replace the recipe's substitutes: synonyms (neighbour sets), wordnet, nearest (--vectors)")
	fs.StringVar(&parts.Search, "search", "", "replace the recipe's search: greedy:order=delete|unk|pwws|gradient|random, beam:width=4, genetic:pop=60,gens=20, pso:pop=60,iters=20, iga:pop=60,gens=20,max-replace=5, hla:pop=30,gens=100,init=2500")
	fs.Var(&constraints, "constraint", "add a constraint (repeatable): repeat, stopwords:list=textfooler|ftml|nltk, max-rate:rate=0.25, min-length:min=3, protect:words=w1|w2, embedding:max=0.5, pos, use:min=0.84,window=15, lm-top:n=4")
	fs.BoolVar(&parts.DropConstraints, "no-recipe-constraints", false, "drop the recipe's constraints (keep only --constraint ones)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	rules := []numRule{
		{n >= 0, "n", n, "≥ 0 (0 = the whole split)"},
		{budget >= 0, "query-budget", budget, "≥ 0 (0 = no limit)"},
		workersRule("workers", workers),
	}
	if err := checkNumbers(append(append(rules, nf.numbers()...), ef.numbers()...)...); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	parts.Constraints = constraints
	if recipeName == "" && parts.Empty() {
		return usageError{fmt.Errorf("--recipe is required (valid: %s), or compose an attack with --transformation and --search",
			strings.Join(attack.RecipeNames(), ", "))}
	}
	var rc attack.Recipe
	if recipeName != "" {
		var err error
		if rc, err = attack.LookupRecipe(recipeName); err != nil {
			return usageError{err}
		}
	}
	if err := nf.resolve(fs, rc.Needs(protocol)); err != nil {
		return err
	}
	switch protocol {
	case attack.ProtocolPaper, attack.ProtocolFTML, attack.ProtocolFLAT:
	default:
		return usageError{fmt.Errorf("--protocol %q: want ftml or flat (or leave it out)", protocol)}
	}
	if err := ef.check(); err != nil {
		return err
	}
	if resume && out == "" {
		return usageError{fmt.Errorf("--resume needs --out")}
	}
	if out != "" {
		// One run per results file: two attacks appending to one CSV
		// would leave duplicate and interleaved rows.
		unlock, err := checkpoint.LockOutput(out)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if out != "" && !resume {
		if _, err := os.Stat(out); err == nil {
			return usageError{fmt.Errorf("%s exists: use --resume to continue that run, or remove it", out)}
		}
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	m, err := model.Load(path)
	if err != nil {
		return err
	}

	ex, dsName, err := df.ForModel(m, splitName, stderr)
	if err != nil {
		return err
	}
	items := attack.ExamplesOf(ex, attack.SampleOrder(len(ex), n, seed, protocol == attack.ProtocolFTML || *shuffle))
	truncated := 0
	for _, it := range items {
		if _, dropped := m.EncodeCounted(it.Text); dropped > 0 {
			truncated++
		}
	}
	if truncated > 0 {
		fmt.Fprintf(stderr, "%d of %d texts are longer than the model's %d tokens: it reads them truncated\n", truncated, len(items), m.MaxLen)
	}
	if m.Pieces != nil {
		// A transformer's word vocabulary is open: give the attacked texts'
		// words their ids now, so that the substitute tables built below
		// (nearest neighbours, the FTML protocol's restriction) cover them.
		for _, it := range items {
			for _, w := range text.Texts(m.Tok.Tokenize(it.Text)) {
				m.Vocab.ID(w)
			}
		}
	}

	in := attackInputs{synPath: synPath, dataDir: df.Dir, wnDir: wnDir, vecPath: vecPath, lmPath: lmPath,
		budget: budget, nf: nf, cacheDir: nearestCacheDir(out)}
	var cfg *attack.Configured
	if recipeName != "" {
		base := in
		if partsUseLM(parts) && rc.Name != "ga" {
			base.lmPath = "" // the lm-top constraint takes it, not the recipe
		}
		if cfg, err = attackSetup(rc, protocol, m, base, stderr); err != nil {
			return err
		}
	} else if lmPath != "" && !partsUseLM(parts) {
		return usageError{fmt.Errorf("--lm is used by --recipe ga (alzantot) and by --constraint lm-top")}
	}
	if !parts.Empty() {
		res, err := partResources(parts, protocol, m, in, stderr)
		if err != nil {
			return err
		}
		if cfg, err = attack.Compose(cfg, protocol, parts, res); err != nil {
			return usageError{err}
		}
	}

	fmt.Fprintf(stderr, "attack %s (protocol %q): %s\n", cfg.Recipe, protocol, cfg.Description)
	for _, d := range cfg.Deviations {
		fmt.Fprintf(stderr, "deviation: %s\n", d)
	}
	opt := attack.RunOptions{Workers: workers, Seed: seed, CSV: out, Resume: resume, MergeBatches: *mergeB}
	if out != "" {
		digest, err := checkpoint.WeightsDigest(path)
		if err != nil {
			return err
		}
		// --n is left out on purpose: the examples come in an order fixed
		// by the dataset, split, seed and sampling, and each one's result
		// by its index, so a run of another --n reuses the rows it shares.
		opt.Identity = map[string]string{"model": digest, "recipe": cfg.Recipe, "attack": cfg.Description,
			"protocol": protocol, "seed": fmt.Sprint(seed), "dataset": dsName, "split": splitName,
			"shuffle": fmt.Sprint(*shuffle), "examples": fmt.Sprint(len(ex)), "query_budget": fmt.Sprint(budget),
			"vectors": vecPath, "synonyms": synPath, "lm": lmPath}
	}
	if !quiet {
		opt.Progress = stderr
	}
	if err := sf.install(&opt, stderr, m.Classes); err != nil {
		return err
	}
	tg := attack.FromModel(m)
	tg.NoIncremental = *noInc
	start := time.Now()
	results, err := attack.RunAll(context.Background(), cfg.Attack, tg, items, opt)
	if err != nil {
		return err
	}
	sum := attack.Summarize(results)
	var agr *explain.Agreement
	if ef.method != "" {
		if out != "" {
			// Keep the pairs' scores beside the CSV so that a stopped
			// explain pass resumes as the attack does.
			ef.model, ef.journal, ef.resume = opt.Identity["model"], ef.journalPath(out), resume
		}
		if agr, err = ef.run(m, results, seed, workers); err != nil {
			return err
		}
	}
	wall := time.Since(start).Seconds()
	if asJSON {
		obj := map[string]any{}
		b, _ := json.Marshal(sum)
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		obj["wall_seconds"] = wall
		// The binomial standard error of the after-attack accuracy over the
		// n attacked examples.
		obj["accuracy_under_attack_se"] = metrics.BinomialSE(sum.AccuracyUnderAttack, sum.N)
		if agr != nil {
			obj["explain"], obj["kendall_tau"], obj["topk_intersection"] = agr, agr.KendallTau, agr.TopK
			obj["kendall_tau_se"], obj["topk_intersection_se"] = agr.KendallTauSE, agr.TopKSE
		}
		obj["recipe"], obj["protocol"], obj["description"], obj["deviations"] = cfg.Recipe, protocol, cfg.Description, cfg.Deviations
		obj["model"], obj["dataset"], obj["split"], obj["seed"], obj["out"] = path, dsName, splitName, seed, out
		obj["truncated"] = truncated
		if cfg.Deviations == nil {
			obj["deviations"] = []string{}
		}
		return json.NewEncoder(stdout).Encode(obj)
	}
	fmt.Fprintf(stdout, "attack %s on %s/%s, model %s, %d examples\n", cfg.Recipe, dsName, splitName, path, sum.N)
	fmt.Fprintf(stdout, "  successful / failed / skipped: %d / %d / %d\n", sum.Successful, sum.Failed, sum.Skipped)
	fmt.Fprintf(stdout, "  verified successes:     %d/%d (each written text read back and re-classified)\n", sum.Verified, sum.Successful)
	if sum.Mismatched > 0 {
		fmt.Fprintf(stdout, "  MISMATCHED successes:   %d: their written text does not fool the model (a bug; indices %s)\n",
			sum.Mismatched, mismatchedIndices(results))
	}
	fmt.Fprintf(stdout, "  original accuracy:      %6.2f%%\n", 100*sum.OriginalAccuracy)
	fmt.Fprintf(stdout, "  accuracy under attack:  %6.2f%% ± %.2f SE\n", 100*sum.AccuracyUnderAttack, 100*metrics.BinomialSE(sum.AccuracyUnderAttack, sum.N))
	fmt.Fprintf(stdout, "  attack success rate:    %6.2f%%\n", 100*sum.AttackSuccessRate)
	fmt.Fprintf(stdout, "  avg perturbed words:    %6.2f%%\n", sum.AvgPerturbedWordPct)
	fmt.Fprintf(stdout, "  avg words per input:    %6.1f\n", sum.AvgWords)
	fmt.Fprintf(stdout, "  avg queries:            %6.1f distinct inputs scored; %.1f with repeats (TextAttack's count)\n", sum.AvgQueries, sum.AvgQueriesWithRepeats)
	fmt.Fprintf(stdout, "  seconds per example:    %8.3f (wall %.1fs)\n", sum.SecondsPerExample, wall)
	if truncated > 0 {
		fmt.Fprintf(stdout, "  truncated texts:        %d (the model reads their first %d tokens)\n", truncated, m.MaxLen)
	}
	if agr != nil {
		printAgreement(stdout, agr)
	}
	for _, d := range cfg.Deviations {
		fmt.Fprintf(stdout, "  deviation: %s\n", d)
	}
	return nil
}

// mismatchedIndices lists the example indices of successes whose written
// text, read back, does not fool the model (at most 20).
func mismatchedIndices(rs []attack.Result) string {
	var out []string
	for _, r := range rs {
		if r.Check == attack.Mismatch {
			if len(out) == 20 {
				return strings.Join(out, " ") + " …"
			}
			out = append(out, fmt.Sprint(r.Index))
		}
	}
	return strings.Join(out, " ")
}
