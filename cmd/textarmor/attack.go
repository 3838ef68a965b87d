package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

func runAttack(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("attack", "attack (--model DIR | --victim URL) --recipe NAME (--dataset NAME | --test FILE) [flags]", stderr)
	c := pipeline.NewAttackConfig()
	var df dataFlags
	df.register(fs, false)
	var blasName string
	var asJSON, quiet bool
	fs.StringVar(&c.Model, "model", "", "model directory written by 'textarmor train' (required, or --victim)")
	fs.StringVar(&c.Victim, "victim", "", "instead of --model, the URL of a model behind an HTTP endpoint (docs/serving.md's protocol, e.g. 'serve' at http://127.0.0.1:8080/v1/predict)")
	fs.IntVar(&c.Remote.Batch, "victim-batch", c.Remote.Batch, "--victim: texts per request")
	fs.IntVar(&c.Remote.Concurrency, "victim-concurrency", c.Remote.Concurrency, "--victim: requests in flight at once")
	fs.DurationVar(&c.Remote.Timeout, "victim-timeout", c.Remote.Timeout, "--victim: each request's deadline")
	fs.IntVar(&c.Remote.Retries, "victim-retries", c.Remote.Retries, "--victim: tries again after a 429, a 5xx, a timeout or a lost connection (backoff doubling from 200ms)")
	fs.Int64Var(&c.Remote.Budget, "victim-budget", 0, "--victim: texts sent at most in the run (0 = no limit); past it the run stops (--resume continues it)")
	fs.StringVar(&c.Recipe, "recipe", "", "attack recipe: "+strings.Join(attack.RecipeNames(), ", ")+"; or pgd, fgm: the input embeddings moved by ε (--eps, --steps) (required)")
	ec := pipeline.NewEmbeddingAttackConfig()
	fs.Float64Var(&ec.Eps, "eps", ec.Eps, "pgd, fgm: L2 radius of each example's perturbation of its embeddings (0 = none)")
	fs.IntVar(&ec.Steps, "steps", ec.Steps, "pgd: ascent steps K, each of size ε (fgm takes one)")
	fs.StringVar(&c.Split, "split", c.Split, "split to attack: train, dev or test")
	fs.IntVar(&c.N, "n", c.N, "attack this many examples (0 = the whole split); ftml protocol: a seeded random sample, otherwise the first n")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed (with the example index it seeds each example's attack)")
	fs.IntVar(&c.QueryBudget, "query-budget", c.QueryBudget, "stop an example after this many model queries (result Failed); 0 = no limit")
	fs.IntVar(&c.Workers, "workers", c.Workers, "examples attacked in parallel (results do not depend on it)")
	fs.StringVar(&c.CSV, "out", "", "per-example results CSV (TextAttack's columns), one fsynced row per example")
	fs.BoolVar(&c.Resume, "resume", false, "continue the run recorded in --out, skipping the examples it already has")
	fs.BoolVar(&asJSON, "json", false, "print the summary as one JSON object")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&c.Protocol, "protocol", c.Protocol, "evaluation protocol: ftml or flat (default: the paper's own recipe)")
	fs.StringVar(&c.Synonyms, "synonyms", "", "counter-fitted neighbour JSON (default: counterfitted-neighbors-jia2019/counterfitted_neighbors.json under --data)")
	fs.StringVar(&c.WordNet, "wordnet", c.WordNet, "WordNet dict directory (pwws without a protocol, or flat)")
	fs.StringVar(&c.Vectors, "vectors", "", "word vectors (e.g. counter-fitted, GloVe text format): textfooler's cosine ≥ 0.5 check and, as the documented USE stand-in, mean word-vector cosine for textfooler/textbugger/hla (hla default: the model's embedding table)")
	fs.StringVar(&c.LM, "lm", "", "language model from 'textarmor lm train' for ga (alzantot) without --protocol ftml: keeps the best 4 substitutes per position in context, the paper's filter (default: none, a declared deviation)")
	fs.StringVar(&c.MLM, "mlm", "", "bae, bert-attack: Hugging Face directory with a masked-LM head ('mlm train-head' writes one)")
	fs.StringVar(&c.SentenceEncoder, "sentence-encoder", "", "bae, bert-attack, textbugger, and hla on a transformer or remote victim without --vectors: transformer sentence encoder standing in for USE (default: models/all-MiniLM-L6-v2 under --data)")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	registerNearest(fs, &c.Nearest)
	var sf showFlags
	sf.register(fs)
	fs.StringVar(&c.Shard, "shard", "", "attack shard i/n of the selected examples (positions i, i+n, …; 'textarmor merge' joins the n results files into the single run's)")
	fs.BoolVar(&c.Shuffle, "shuffle", false, "attack a seeded random sample of --n examples, as --protocol ftml does, instead of the first n (which may all have one label: IMDB's test split is sorted)")
	fs.BoolVar(&c.MergeBatches, "merge-batches", false, "merge the full forward passes of the examples in flight (--workers > 1) into one model call (same results)")
	registerExplain(fs, &c.Explain)
	fs.BoolVar(&c.NoIncremental, "no-incremental", false, "score every candidate with a full forward pass (off: candidates close to the current text are re-evaluated incrementally; same results, faster)")
	var constraints cli.List
	fs.StringVar(&c.Parts.Goal, "goal", "", "replace the recipe's goal: "+strings.Join(attack.GoalNames, ", ")+" (targeted:class=N)")
	fs.StringVar(&c.Parts.Transformation, "transformation", "", "replace the recipe's substitutes: synonyms (neighbour sets), wordnet, nearest (--vectors)")
	fs.StringVar(&c.Parts.Search, "search", "", "replace the recipe's search: greedy:order=delete|unk|pwws|gradient|random, beam:width=4, genetic:pop=60,gens=20, pso:pop=60,iters=20, iga:pop=60,gens=20,max-replace=5, hla:pop=30,gens=100,init=2500")
	fs.Var(&constraints, "constraint", "add a constraint (repeatable): repeat, stopwords:list=textfooler|ftml|nltk, max-rate:rate=0.25, min-length:min=3, protect:words=w1|w2, embedding:max=0.5, pos, use:min=0.84,window=15, lm-top:n=4")
	fs.BoolVar(&c.Parts.DropConstraints, "no-recipe-constraints", false, "drop the recipe's constraints (keep only --constraint ones)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Data, c.Parts.Constraints, c.Log = df.Data, constraints, stderr
	if c.Recipe == "pgd" || c.Recipe == "fgm" {
		ec.Model, ec.Data, ec.Split, ec.N, ec.Seed, ec.Method = c.Model, c.Data, c.Split, c.N, c.Seed, c.Recipe
		r, err := pipeline.EmbeddingAttack(context.Background(), ec)
		if err != nil {
			return err
		} else if asJSON {
			return json.NewEncoder(stdout).Encode(r)
		}
		_, err = fmt.Fprintf(stdout, "%s, ε %g, %d steps of %g, on %d %s examples: accuracy %.2f%% clean, %.2f%% under attack (drop %.2f ± %.2f paired SE); sentence vectors moved: cosine %.3f ± %.3f, Euclidean %.3f ± %.3f (different examples' clean vectors: cosine %.3f, RMS distance %.3f)\n",
			r.Method, r.Attack.Eps, r.Attack.Steps, r.Attack.Step, r.N, r.Dataset, 100*r.Clean, 100*r.UnderAttack, 100*(r.Clean-r.UnderAttack), 100*r.DropSE,
			r.Cosine, r.CosineSE, r.Euclidean, r.EuclideanSE, r.PairCosine, r.PairDistance)
		return err
	}
	nearestGiven(fs, &c.Nearest)
	if !quiet {
		c.Progress = stderr
	}
	if err := c.Check(); err != nil {
		return err
	}
	if err := sf.apply(&c, stderr); err != nil {
		return err
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	rep, err := pipeline.Attack(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(rep.JSON())
	}
	rep.WriteText(stdout)
	return nil
}
