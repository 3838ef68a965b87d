package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

// ftmlTableData, when set, replaces IMDB in `bench ftml-table` (tests).
var ftmlTableData func(dataDir string) (*dataset.Dataset, dataset.Preset, error)

// runBenchFTMLTable implements `bench ftml-table` (spec §11 Table 1, §10).
func runBenchFTMLTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench ftml-table", "bench ftml-table --data DIR --model cnn|bilstm|transformer --out DIR [--quick] [flags]", stderr)
	c := experiments.NewFTMLTable()
	var defList, atkList, recipeEpochs, blasName string
	var n, trainN, cleanN int
	var recipeFlags cli.List
	var report bool
	var seeds cli.Seeds
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&c.Arch, "model", c.Arch, "architecture: cnn or bilstm (Table 1; bilstm for the LSTM columns), transformer (Table 2, fine-tuning --init)")
	fs.StringVar(&c.Init, "init", "", "transformer: the Hugging Face checkpoint (default DATA/models/all-MiniLM-L6-v2); --max-len N counts its word pieces (default 256)")
	fs.IntVar(&c.MaxLen, "max-len", 0, "transformer: word pieces per text with [CLS] and [SEP] (0 = the spec's 256)")
	fs.StringVar(&c.Out, "out", c.Out, "output folder: models, one result file per cell, table.md, table.json (rerun to resume)")
	fs.BoolVar(&c.Quick, "quick", false, "smoke run (under 15 minutes on 2 cores): 2,000 training reviews, 1-7 epochs at batch 16, 30 attacked examples with halved GA/PSO/HLA budgets, clean accuracy on 1,000 test examples")
	fs.StringVar(&defList, "defenses", "", "defenses (rows; default the table's: "+strings.Join(c.Defenses, ",")+"; transformer "+strings.Join(experiments.FTMLTransformerDefenses(), ",")+")")
	fs.StringVar(&atkList, "attacks", strings.Join(c.Attacks, ","), "attack recipes (columns), run with --protocol ftml")
	fs.IntVar(&n, "n", 0, "attacked test examples, a seeded permutation's first n (default 1000; quick 30)")
	fs.IntVar(&c.First, "first", 0, "attack this many examples in every row first, then extend every cell to --n (the same seeded sample: each attack resumes its CSV); cells on fewer than --n examples are marked in the table")
	fs.IntVar(&trainN, "train-n", -1, "train on a seeded subset of this many examples (0 = all; default all, quick 2000)")
	fs.IntVar(&cleanN, "clean-n", -1, "clean accuracy on the first n of the test permutation (0 = the whole test set; default all, quick 1000)")
	fs.Int64Var(&c.Seed, "seed", 0, "seed of the attack sample (spec: 0) and of the attacks")
	fs.Var(&seeds, "seeds", "train every row several times: a count N (instances 0..N-1) or offsets 0,1,2; instance k trains with seed 42+k on the same subset and is attacked on the same examples, in DIR/seed-k (instance 0: DIR itself, the single-seed layout); cells show mean ± SD [min–max], claims a SE with the seed-to-seed variance")
	fs.IntVar(&c.Workers, "workers", c.Workers, "examples attacked in parallel")
	fs.StringVar(&c.Synonyms, "synonyms", "", "counter-fitted neighbour JSON (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.StringVar(&c.Vectors, "vectors", "", "word vectors for HLA's USE stand-in (default: the attacked model's embedding table)")
	fs.StringVar(&c.Embeddings, "embeddings", "", "initial word vectors for every model (spec: GloVe 300-d); default random")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	fs.Var(&recipeFlags, "recipe-flags", "add a row's own hyper-parameter flags to its recipe, DEFENSE=--FLAG=VALUE[ --FLAG=VALUE] (repeatable; e.g. 'ibp=--ibp-hull=projected'); recorded with the row")
	fs.StringVar(&recipeEpochs, "recipe-epochs", "", "shorten or lengthen rows' training, DEFENSE=N[,DEFENSE=N] (IBP's ramp keeps the reference's first 2/3); the table marks such rows")
	fs.BoolVar(&report, "report", false, "print the table and its checks from the cells already there, computing and writing nothing (safe beside a running table)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if c.Quick {
		c.UseQuickSizes(n != 0, trainN != -1, cleanN != -1)
	}
	// Values out of range reach the table's check, which names them.
	if n != 0 {
		c.N = n
	}
	if trainN != -1 {
		c.TrainN = trainN
	}
	if cleanN != -1 {
		c.CleanN = cleanN
	}
	c.Defenses, c.Attacks = cli.SplitList(defList), cli.SplitList(atkList)
	c.Seeds = seeds
	var err error
	if c.Recipes, err = tableRecipes(experiments.FTMLRecipesFor(c.Arch), c.Quick, recipeEpochs, recipeFlags); err != nil {
		return err
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	if ftmlTableData != nil {
		if c.Dataset, c.Preset, err = ftmlTableData(c.DataDir); err != nil {
			return err
		}
	}
	c.Log = stderr
	var rep *experiments.FTMLReport
	if report {
		rep, err = experiments.ReportFTMLTable(c)
	} else {
		rep, err = experiments.RunFTMLTable(context.Background(), c)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, rep.Markdown)
	return err
}

// tableRecipes are the table's recipes with --recipe-epochs
// (DEFENSE=N,...) and --recipe-flags (DEFENSE=--FLAG=VALUE ...) applied.
func tableRecipes(all []experiments.FTMLRecipe, quick bool, epochs string, flags []string) (map[string]experiments.FTMLRecipe, error) {
	recipes := map[string]experiments.FTMLRecipe{}
	for _, r := range all {
		if quick {
			r = r.Quick()
		}
		recipes[r.Defense] = r
	}
	for _, kv := range cli.SplitList(epochs) {
		name, val, ok := strings.Cut(kv, "=")
		r, known := recipes[name]
		n, err := strconv.Atoi(val)
		switch {
		case !ok || err != nil || n < 1:
			return nil, usageError{fmt.Errorf("--recipe-epochs: %q is not DEFENSE=EPOCHS with EPOCHS ≥ 1", kv)}
		case !known:
			return nil, usageError{fmt.Errorf("--recipe-epochs: %q has no recipe in this table", name)}
		}
		recipes[name] = r.WithEpochs(n)
	}
	tuned := map[string][]string{}
	for _, spec := range flags {
		name, val, ok := strings.Cut(spec, "=")
		r, known := recipes[name]
		fields := strings.Fields(val)
		switch {
		case !ok || len(fields) == 0:
			return nil, usageError{fmt.Errorf("--recipe-flags: %q is not DEFENSE=--FLAG=VALUE[ --FLAG=VALUE]", spec)}
		case !known:
			return nil, usageError{fmt.Errorf("--recipe-flags: %q has no recipe in this table", name)}
		}
		for _, f := range fields {
			flagName, _, hasValue := strings.Cut(strings.TrimLeft(f, "-"), "=")
			if !strings.HasPrefix(f, "--") || !hasValue || !experiments.RecipeFlagAllowed(name, flagName) {
				return nil, usageError{fmt.Errorf("--recipe-flags: %q: only the row's own flags (--%s-NAME=VALUE), the architecture flags and the optimiser's (%s), as --NAME=VALUE",
					f, name, "--"+strings.Join(append(slices.Clone(experiments.RecipeArchFlags), experiments.RecipeTrainFlags...), ", --"))}
			}
			if slices.Contains(tuned[name], flagName) || r.Sets(flagName) {
				return nil, usageError{fmt.Errorf("--recipe-flags: --%s is already in the %s recipe", flagName, name)}
			}
			tuned[name] = append(tuned[name], flagName)
		}
		apply, _, err := trainOverlay("--recipe-flags "+name, fields)
		if err != nil {
			return nil, err
		}
		prev := r.Tune
		r.Tune = func(c *pipeline.TrainConfig) error {
			if prev != nil {
				if err := prev(c); err != nil {
					return err
				}
			}
			apply(c, nil)
			return nil
		}
		r.Tuned = strings.TrimSpace(r.Tuned + " " + strings.Join(fields, " "))
		recipes[name] = r
	}
	return recipes, nil
}
