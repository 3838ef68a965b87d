package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// ftmlTableData loads the data of `bench ftml-table`: IMDB with the FTML
// preprocessing (spec §6/§8: ftml tokenizer, 512 words, the 50,000 most
// frequent training words). Tests replace it with a generated dataset.
var ftmlTableData = func(dataDir string) (*dataset.Dataset, dataset.Preset, error) {
	return pipeline.Data{Preset: "imdb", Dir: dataDir, Tokenizer: "ftml", MaxLen: 512, MinCount: 1, MaxVocab: 50000}.Load()
}

// tableRecipe is one defense's training recipe as `train` flags.
type tableRecipe struct {
	Defense string
	Epochs  int
	Args    []string // besides --epochs
	// Reference is the recipe's own epoch count when --recipe-epochs
	// changed Epochs (0: unchanged).
	Reference int
}

// ftmlRecipes are the spec's recipes (§6, §13); ASCC's epochs and batch are
// not in the spec (chosen: 10 epochs like ATFL, the standard optimiser).
func ftmlRecipes() []tableRecipe {
	std := []string{"--batch", "64", "--lr", "1e-3"}
	return []tableRecipe{
		{Defense: "standard", Epochs: 2, Args: std},
		{Defense: "ftml", Epochs: 20, Args: []string{"--batch", "32", "--lr", "5e-4", "--lr-decay-epochs", "16"}},
		{Defense: "sem", Epochs: 2, Args: append([]string{"--sem-k", "4"}, std...)},
		{Defense: "ascc", Epochs: 10, Args: std},
		{Defense: "atfl", Epochs: 10, Args: append([]string{"--atfl-steps", "30"}, std...)},
		{Defense: "ibp", Epochs: 60, Args: append([]string{"--ibp-ramp-epochs", "40"}, std...)},
	}
}

// overrideEpochs applies --recipe-epochs (DEFENSE=N,...): the row trains
// for N epochs instead of its reference count, which it keeps in
// Reference for the table to show. IBP's ramp scales with it (2/3).
func overrideEpochs(recipes map[string]tableRecipe, spec string) error {
	for _, kv := range splitList(spec) {
		name, val, ok := strings.Cut(kv, "=")
		r, known := recipes[name]
		n, err := strconv.Atoi(val)
		switch {
		case !ok || err != nil || n < 1:
			return fmt.Errorf("--recipe-epochs: %q is not DEFENSE=EPOCHS with EPOCHS ≥ 1", kv)
		case !known:
			return fmt.Errorf("--recipe-epochs: %q has no Table 1 recipe", name)
		}
		r.Reference = r.Epochs
		r.Epochs = n
		for i := 0; i+1 < len(r.Args); i += 2 {
			if r.Args[i] == "--ibp-ramp-epochs" {
				r.Args[i+1] = fmt.Sprint(max(1, (2*n+1)/3))
			}
		}
		recipes[name] = r
	}
	return nil
}

// addRecipeFlags applies --recipe-flags DEFENSE=--FLAG=VALUE[ --FLAG=VALUE]:
// the defense's own hyper-parameter flags (--ibp-…, --ascc-…) appended to
// its row's recipe, so a variant is trained, recorded and shown like the
// reference recipe.
func addRecipeFlags(recipes map[string]tableRecipe, specs []string) error {
	for _, spec := range specs {
		name, val, ok := strings.Cut(spec, "=")
		r, known := recipes[name]
		fields := strings.Fields(val)
		switch {
		case !ok || len(fields) == 0:
			return fmt.Errorf("--recipe-flags: %q is not DEFENSE=--FLAG=VALUE[ --FLAG=VALUE]", spec)
		case !known:
			return fmt.Errorf("--recipe-flags: %q has no Table 1 recipe", name)
		}
		r.Args = slices.Clone(r.Args)
		for _, f := range fields {
			flagName, _, hasValue := strings.Cut(strings.TrimLeft(f, "-"), "=")
			if !strings.HasPrefix(f, "--") || !hasValue || !rowFlag(name, flagName) {
				return fmt.Errorf("--recipe-flags: %q: only the row's own flags (--%s-NAME=VALUE), the architecture flags and the optimiser's (%s), as --NAME=VALUE",
					f, name, "--"+strings.Join(append(slices.Clone(recipeArchFlags), recipeTrainFlags...), ", --"))
			}
			// Recipe args are "--NAME VALUE" pairs or "--NAME=VALUE"
			// tokens (earlier --recipe-flags); values never start "--".
			for _, a := range r.Args {
				if had, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "--") && had == flagName {
					return fmt.Errorf("--recipe-flags: --%s is already in the %s recipe", flagName, name)
				}
			}
			r.Args = append(r.Args, f)
		}
		recipes[name] = r
	}
	return nil
}

// recipeArchFlags are the `train` architecture flags a row's recipe may
// set (--recipe-flags), e.g. Jia et al.'s IBP model for the IBP row (spec
// A16); the others come from the table's --model. recipeTrainFlags are
// the optimiser flags no reference recipe sets (Jia et al. clip the
// gradient norm at 0.25 and decay weights by 1e-4).
var (
	recipeArchFlags  = []string{"hidden", "pool", "dropout", "input-layer", "head-hidden", "filters", "widths"}
	recipeTrainFlags = []string{"clip", "weight-decay"}
)

// rowFlag reports whether flag NAME may appear in defense's recipe flags.
func rowFlag(defense, name string) bool {
	return strings.HasPrefix(name, defense+"-") || slices.Contains(recipeArchFlags, name) || slices.Contains(recipeTrainFlags, name)
}

// quickRecipe shrinks a recipe for --quick: a few epochs at batch 16 (on
// 2,000 reviews, batch 64 leaves too few updates for any model to leave
// chance), and the costly inner loops (ATFL's substitutions, IBP's ramp,
// ASCC's maximisation) cut to fit the 15-minute budget.
func quickRecipe(r tableRecipe) tableRecipe {
	epochs := map[string]int{"standard": 3, "ftml": 7, "sem": 3, "ascc": 2, "atfl": 1, "ibp": 1}
	q := tableRecipe{Defense: r.Defense, Epochs: epochs[r.Defense]}
	for i := 0; i < len(r.Args); i += 2 {
		switch r.Args[i] {
		case "--lr-decay-epochs":
		case "--ibp-ramp-epochs":
			q.Args = append(q.Args, r.Args[i], "1")
		case "--atfl-steps":
			q.Args = append(q.Args, r.Args[i], "5")
		case "--batch":
			q.Args = append(q.Args, r.Args[i], "16")
		default:
			q.Args = append(q.Args, r.Args[i], r.Args[i+1])
		}
	}
	// ASCC's full recipe keeps the default 10 inner steps; quick cuts them.
	if r.Defense == "ascc" {
		q.Args = append(q.Args, "--ascc-steps", "3")
	}
	return q
}

// paperTable1IMDB holds the spec's Table 1 IMDB cells (clean, pwws, ga, pso,
// hla) for the CNN and LSTM columns.
var paperTable1IMDB = map[string]map[string][5]float64{
	"cnn": {"standard": {89.7, 0.6, 2.6, 1.4, 17.7}, "ibp": {81.7, 75.9, 76.0, 75.9, 76.6}, "atfl": {85.0, 63.6, 66.8, 64.7, 72.8},
		"sem": {87.6, 62.2, 63.5, 61.5, 70.5}, "ascc": {84.8, 74.0, 75.5, 74.5, 77.6}, "ftml": {88.1, 81.1, 81.4, 81.1, 82.4}},
	"lstm": {"standard": {89.1, 0.2, 1.6, 0.3, 8.7}, "ibp": {77.6, 67.5, 67.8, 67.6, 68.2}, "atfl": {85.1, 72.2, 75.5, 74.0, 77.7},
		"sem": {86.8, 61.9, 63.7, 62.2, 70.8}, "ascc": {84.3, 74.2, 76.8, 75.5, 79.5}, "ftml": {87.2, 79.0, 79.2, 78.8, 79.7}},
}

// specArch are the spec's §7 architectures as `train` flags: Kim CNN with
// 128 filters per width and dropout 0.2; BiLSTM with 128 units per
// direction, mean pooling and no dropout (the reference averages over the
// padded length; ours over the real tokens, a recorded deviation).
var specArch = map[string][]string{
	"cnn":    {"--filters", "128", "--dropout", "0.2"},
	"bilstm": {"--hidden", "128", "--pool", "mean", "--dropout", "0"},
}

var tableAttackOrder = []string{"pwws", "ga", "pso", "hla"}

// tableCell is one result file of the table.
type tableCell struct {
	Defense  string   `json:"defense"`
	Column   string   `json:"column"` // clean or an attack recipe
	Accuracy float64  `json:"accuracy"`
	N        int      `json:"n"`
	Summary  any      `json:"summary,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	Seconds  float64  `json:"seconds"`
}

type ftmlTable struct {
	out, arch, dataDir, synPath, vecPath string
	quick, report                        bool
	n, trainN, cleanN, workers           int
	first                                int // preview pass size (--first); 0 = none
	passN                                int // examples per attack cell in the current pass
	seed                                 int64
	netArgs                              []string // the table's architecture as `train` flags
	stderr                               io.Writer
	ds                                   *dataset.Dataset
	preset                               dataset.Preset
	vocab                                *text.Vocab
	nb                                   *lexicon.Neighbors
}

// runBenchFTMLTable implements `bench ftml-table` (spec §11 Table 1, §10).
func runBenchFTMLTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench ftml-table", "bench ftml-table --data DIR --model cnn|bilstm --out DIR [--quick] [flags]", stderr)
	tb := &ftmlTable{stderr: stderr}
	var defList, atkList string
	fs.StringVar(&tb.dataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	fs.StringVar(&tb.arch, "model", "cnn", "architecture: cnn or bilstm (the LSTM columns)")
	fs.StringVar(&tb.out, "out", "ftml-table", "output folder: models, one result file per cell, table.md, table.json (rerun to resume)")
	fs.BoolVar(&tb.quick, "quick", false, "smoke run (under 15 minutes on 2 cores): 2,000 training reviews, 1-7 epochs at batch 16, 30 attacked examples with halved GA/PSO/HLA budgets, clean accuracy on 1,000 test examples")
	fs.StringVar(&defList, "defenses", "standard,ftml,sem,ascc,atfl,ibp", "defenses (rows)")
	fs.StringVar(&atkList, "attacks", strings.Join(tableAttackOrder, ","), "attack recipes (columns), run with --protocol ftml")
	fs.IntVar(&tb.n, "n", 0, "attacked test examples, a seeded permutation's first n (default 1000; quick 30)")
	fs.IntVar(&tb.first, "first", 0, "attack this many examples in every row first, then extend every cell to --n (the same seeded sample: each attack resumes its CSV); cells on fewer than --n examples are marked in the table")
	fs.IntVar(&tb.trainN, "train-n", -1, "train on a seeded subset of this many examples (0 = all; default all, quick 2000)")
	fs.IntVar(&tb.cleanN, "clean-n", -1, "clean accuracy on the first n of the test permutation (0 = the whole test set; default all, quick 1000)")
	fs.Int64Var(&tb.seed, "seed", 0, "seed of the attack sample (spec: 0) and of the attacks")
	fs.IntVar(&tb.workers, "workers", runtime.NumCPU(), "examples attacked in parallel")
	fs.StringVar(&tb.synPath, "synonyms", "", "counter-fitted neighbour JSON (default DATA/counterfitted-neighbors-jia2019/counterfitted_neighbors.json)")
	fs.StringVar(&tb.vecPath, "vectors", "", "word vectors for HLA's USE stand-in (default: the attacked model's embedding table)")
	embeddings := fs.String("embeddings", "", "initial word vectors for every model (spec: GloVe 300-d); default random")
	blasName := fs.String("blas", "", "BLAS backend (default: the build's)")
	var recipeEpochs string
	var recipeFlags specList
	fs.Var(&recipeFlags, "recipe-flags", "add a row's own hyper-parameter flags to its recipe, DEFENSE=--FLAG=VALUE[ --FLAG=VALUE] (repeatable; e.g. 'ibp=--ibp-hull=projected'); recorded with the row")
	fs.StringVar(&recipeEpochs, "recipe-epochs", "", "shorten or lengthen rows' training, DEFENSE=N[,DEFENSE=N] (IBP's ramp keeps the reference's first 2/3); the table marks such rows")
	fs.BoolVar(&tb.report, "report", false, "print the table and its checks from the cells already there, computing and writing nothing (safe beside a running table)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkNumbers(
		numRule{tb.n >= 0, "n", tb.n, "≥ 0 (0 = the default: 1000, quick 30)"},
		numRule{tb.first >= 0, "first", tb.first, "≥ 0 (0 = no preview pass)"},
		numRule{tb.trainN >= -1, "train-n", tb.trainN, "≥ 0 (0 = all; -1, the default, = all, quick 2000)"},
		numRule{tb.cleanN >= -1, "clean-n", tb.cleanN, "≥ 0 (0 = the whole test set; -1, the default, = all, quick 1000)"},
		workersRule("workers", tb.workers),
	); err != nil {
		return err
	}
	if tb.arch != "cnn" && tb.arch != "bilstm" {
		return usageError{fmt.Errorf("--model %q: want cnn or bilstm", tb.arch)}
	}
	if err := useBLAS(*blasName); err != nil {
		return err
	}
	pick := func(v, full, quick int) int {
		switch {
		case v >= 0 && (v != 0 || full == 0):
			return v
		case tb.quick:
			return quick
		}
		return full
	}
	tb.n = pick(tb.n, 1000, 30)
	if tb.n == 0 {
		tb.n = 1000
	}
	tb.trainN = pick(tb.trainN, 0, 2000)
	tb.cleanN = pick(tb.cleanN, 0, 1000)
	recipes := map[string]tableRecipe{}
	for _, r := range ftmlRecipes() {
		if tb.quick {
			r = quickRecipe(r)
		}
		recipes[r.Defense] = r
	}
	if err := overrideEpochs(recipes, recipeEpochs); err != nil {
		return usageError{err}
	}
	if err := addRecipeFlags(recipes, recipeFlags); err != nil {
		return usageError{err}
	}
	for _, r := range ftmlRecipes() {
		if err := checkRecipe(recipes[r.Defense]); err != nil {
			return err
		}
	}
	var defs, atks []string
	for _, d := range splitList(defList) {
		if _, ok := recipes[d]; !ok {
			return usageError{fmt.Errorf("--defenses: %q has no Table 1 recipe (valid: standard, ftml, sem, ascc, atfl, ibp)", d)}
		}
		defs = append(defs, d)
	}
	for _, a := range splitList(atkList) {
		rc, err := attack.LookupRecipe(a)
		if err != nil {
			return usageError{err}
		}
		atks = append(atks, rc.Name)
	}
	tb.netArgs = append([]string{"--model", tb.arch}, specArch[tb.arch]...)
	if *embeddings != "" {
		tb.netArgs = append(tb.netArgs, "--embeddings", *embeddings)
	}
	tb.out = filepath.Join(tb.out, tb.arch)
	if tb.report {
		// The test set's size and the sample's order are all a report
		// needs; a running table holds the lock and keeps writing.
		var err error
		if tb.ds, tb.preset, err = ftmlTableData(tb.dataDir); err != nil {
			return err
		}
		return tb.writeTable(stdout, defs, atks, recipes, true)
	}
	var err error
	if tb.ds, tb.preset, err = ftmlTableData(tb.dataDir); err != nil {
		return err
	}
	tok, err := text.NewTokenizer(tb.preset.Tokenizer)
	if err != nil {
		return err
	}
	tb.vocab = train.BuildVocab(tok, tb.ds.Train, tb.preset.MinCount, tb.preset.MaxVocab)
	if tb.synPath == "" {
		if tb.synPath, err = defaultSynonyms(tb.dataDir); err != nil {
			return err
		}
	}
	if tb.nb, err = lexicon.LoadNeighbors(tb.synPath); err != nil {
		return fmt.Errorf("synonyms: %w (give --synonyms PATH or --data DIR)", err)
	}
	fmt.Fprintf(stderr, "ftml-table: %s %s, %d train / %d test, vocabulary %d, %s tokenizer, max length %d; attack sample %d (seed %d); output %s\n",
		tb.ds.Name, tb.arch, len(tb.ds.Train), len(tb.ds.Test), tb.vocab.Len(), tb.preset.Tokenizer, tb.preset.MaxLen, tb.n, tb.seed, tb.out)
	// table.md follows every finished cell: a row's attacks take hours, and
	// the table is how a long run is watched.
	cell := func(def, col string, f func() (tableCell, error)) error {
		if err := tb.cell(def, col, tb.cellSize(col), f); err != nil {
			return err
		}
		return tb.writeTable(stdout, defs, atks, recipes, false)
	}
	passes := []int{tb.n}
	if tb.first > 0 && tb.first < tb.n {
		passes = []int{tb.first, tb.n}
	}
	// Each row is locked while this run trains and attacks it, not the
	// whole folder: runs on different rows can share --out (one per core).
	row := func(d string) error {
		unlock, err := checkpoint.LockDir(filepath.Join(tb.out, d))
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		defer unlock()
		m, err := tb.trainDefense(recipes[d])
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if err := cell(d, "clean", func() (tableCell, error) { return tb.clean(m) }); err != nil {
			return err
		}
		if d == "ibp" {
			if err := cell(d, "certified", func() (tableCell, error) { return tb.certified(m) }); err != nil {
				return err
			}
		}
		for _, a := range atks {
			if err := cell(d, a, func() (tableCell, error) { return tb.attack(m, d, a) }); err != nil {
				return err
			}
		}
		return nil
	}
	for _, tb.passN = range passes {
		for _, d := range defs {
			if err := row(d); err != nil {
				return err
			}
		}
	}
	return tb.writeTable(stdout, defs, atks, recipes, true)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// rowNet parses the table's architecture flags, then a row's own (extra,
// as --NAME=VALUE), which override them.
func (tb *ftmlTable) rowNet(extra []string) (*netFlags, error) {
	fl := flag.NewFlagSet("net", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	var nf netFlags
	nf.register(fl)
	return &nf, fl.Parse(append(slices.Clone(tb.netArgs), extra...))
}

// trainDefense trains one row's model, or loads it when a finished one is
// there (a half-trained run resumes from its checkpoint).
func (tb *ftmlTable) trainDefense(r tableRecipe) (*model.Model, error) {
	dir := filepath.Join(tb.out, r.Defense, "model")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"--defense", r.Defense, "--epochs", fmt.Sprint(r.Epochs)}, r.Args...)
	if r.Defense != "standard" {
		args = append(args, "--synonyms", tb.synPath)
	}
	// A model or checkpoint of other epochs (--recipe-epochs) must not
	// fill, or be resumed into, a row that claims this recipe.
	trained, started := filepath.Join(tb.out, r.Defense, "trained.json"), filepath.Join(tb.out, r.Defense, "started.json")
	if err := tb.extendRow(r, args, dir); err != nil {
		return nil, err
	}
	for _, rec := range []string{trained, started} {
		if err := sameRecipe(rec, r, filepath.Join(tb.out, r.Defense)); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(trained); err == nil {
		fmt.Fprintf(tb.stderr, "ftml-table: %s: model exists, skipping training\n", r.Defense)
		return model.Load(dir)
	}
	if err := writeJSON(started, map[string]any{"recipe": args}); err != nil {
		return nil, err
	}
	rp, err := parseRecipe(args)
	if err != nil {
		return nil, err
	}
	dfl, opt, decay := &rp.dfl, rp.opt, rp.decay
	if err := dfl.check(rp.fs); err != nil {
		return nil, err
	}
	if opt.DecayEpochs, err = parseDecayEpochs(decay); err != nil {
		return nil, err
	}
	nf, err := tb.rowNet(rp.archArgs)
	if err != nil {
		return nil, err
	}
	cfg, err := nf.config()
	if err != nil {
		return nil, err
	}
	const seed = 42 // spec §6 training seed
	var vecs *text.Vectors
	if nf.embeddings != "" {
		if vecs, err = text.LoadVectors(nf.embeddings, tb.vocab); err != nil {
			return nil, err
		}
		cfg.EmbedDim = vecs.Dim
	}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: tb.preset.Tokenizer, MaxLen: tb.preset.MaxLen, Classes: tb.ds.Classes},
		tb.vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		return nil, err
	}
	if vecs != nil {
		if _, err := m.SetEmbeddings(vecs); err != nil {
			return nil, err
		}
	}
	obj, err := dfl.objective(m, tb.dataDir, tb.stderr)
	if err != nil {
		return nil, err
	}
	sub := dataset.SeededSubset(tb.ds.Train, tb.trainN, seed)
	opt.Seed, opt.Out, opt.Resume, opt.Progress = seed, dir, true, tb.stderr
	opt.CheckpointEvery = defaultCheckpointEvery
	// A shortened row keeps its last checkpoint, so that a later run with
	// more epochs continues it instead of training again from scratch.
	opt.KeepCheckpoint = r.Reference > 0
	opt.LogPath = filepath.Join(tb.out, r.Defense, "train.log.jsonl")
	opt.Info = map[string]any{"dataset": tb.ds.Name, "arch": cfg.Arch, "defense": obj.Name(), "table_recipe": args, "train_n": len(sub)}
	if err := dfl.bl.setupRun(obj, m, sub, opt); err != nil {
		return nil, err
	}
	describeObjective(obj, opt.Info, tb.stderr) // after setupRun: IBP's ramp is set there
	fmt.Fprintf(tb.stderr, "ftml-table: training %s: textarmor train %s (%d examples, last epoch kept, spec A13)\n",
		r.Defense, strings.Join(args, " "), len(sub))
	// No dev set: train.Run then keeps the last epoch (spec §14 A13).
	res, err := train.Run(m, obj, train.Encode(m, sub), nil, opt)
	if err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(tb.out, r.Defense, "trained.json"), map[string]any{"recipe": args, "train_n": len(sub),
		"epochs": res.Epochs}); err != nil {
		return nil, err
	}
	return model.Load(dir)
}

// extendRow prepares a row trained (or being trained) for fewer epochs
// than r, with otherwise the same recipe and a kept checkpoint, to be
// continued to r's epochs: the shorter model's cells and record move to
// ROW/epochs-N, and started.json records the longer recipe. Rows of other
// recipes, or without a checkpoint, are left for sameRecipe to refuse.
func (tb *ftmlTable) extendRow(r tableRecipe, args []string, modelDir string) error {
	rowDir := filepath.Join(tb.out, r.Defense)
	rec, err := rowRecipe(rowDir)
	if err != nil {
		return err
	}
	had, err := strconv.Atoi(flagValue(rec, "--epochs"))
	epochs := map[string]bool{"epochs": true}
	if rec == nil || err != nil || had >= r.Epochs || !slices.Equal(withoutFlags(rec, epochs), withoutFlags(args, epochs)) {
		return nil
	}
	if _, err := os.Stat(modelDir + ".ckpt"); err != nil {
		return nil
	}
	archive := filepath.Join(rowDir, fmt.Sprintf("epochs-%d", had))
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(rowDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "started.json" || name == "train.log.jsonl" || (filepath.Ext(name) != ".json" && filepath.Ext(name) != ".csv") {
			continue
		}
		if err := os.Rename(filepath.Join(rowDir, name), filepath.Join(archive, name)); err != nil {
			return err
		}
	}
	fmt.Fprintf(tb.stderr, "ftml-table: %s: extending the %d-epoch model to %d epochs from its kept checkpoint; its cells move to %s\n",
		r.Defense, had, r.Epochs, archive)
	return writeJSON(filepath.Join(rowDir, "started.json"), map[string]any{"recipe": args})
}

// cell computes one cell unless its file holds it for want examples. A
// cell of another size (an earlier run with another --n or --clean-n) is
// recomputed: an attack then resumes from its CSV, whose rows are a prefix
// of the same seeded permutation.
func (tb *ftmlTable) cell(def, col string, want int, f func() (tableCell, error)) error {
	path := filepath.Join(tb.out, def, col+".json")
	// An attack cell extended to more examples resumes its CSV, so its time
	// is the earlier passes' plus this one's.
	var earlier float64
	if b, err := os.ReadFile(path); err == nil {
		var old tableCell
		if err := json.Unmarshal(b, &old); err != nil {
			return fmt.Errorf("%s: %w (delete it to recompute the cell)", path, err)
		}
		// The preview pass takes a cell that already covers more.
		if old.N == want || (col != "clean" && tb.passN < tb.n && old.N > want) {
			return nil
		}
		fmt.Fprintf(tb.stderr, "ftml-table: %s %s: the cell covers %d examples, this run %d: recomputing\n", def, col, old.N, want)
		if col != "clean" && col != "certified" && old.N < want {
			earlier = old.Seconds
		}
	}
	start := time.Now()
	c, err := f()
	if err != nil {
		return fmt.Errorf("%s/%s: %w", def, col, err)
	}
	c.Defense, c.Column, c.Seconds = def, col, earlier+time.Since(start).Seconds()
	fmt.Fprintf(tb.stderr, "ftml-table: %s %s: %.1f%% (%d examples, %.0fs)\n", def, col, c.Accuracy, c.N, c.Seconds)
	return writeJSON(path, c)
}

// cellSize is how many examples a column's cell covers in this run.
func (tb *ftmlTable) cellSize(col string) int {
	if col == "clean" || col == "certified" {
		if tb.cleanN > 0 && tb.cleanN < len(tb.ds.Test) {
			return tb.cleanN
		}
		return len(tb.ds.Test)
	}
	return min(tb.passN, len(tb.ds.Test))
}

// cleanExamples are the examples of the clean and certified cells.
func (tb *ftmlTable) cleanExamples() ([]dataset.Example, string) {
	if tb.cleanN > 0 && tb.cleanN < len(tb.ds.Test) {
		ex := dataset.SeededSubset(tb.ds.Test, tb.cleanN, tb.seed)
		return ex, fmt.Sprintf("first %d of the seeded test permutation (not the entire test set)", len(ex))
	}
	return tb.ds.Test, "entire test set"
}

func (tb *ftmlTable) clean(m *model.Model) (tableCell, error) {
	ex, note := tb.cleanExamples()
	acc := train.Accuracy(m.Net, train.Encode(m, ex))
	return tableCell{Accuracy: 100 * acc, N: len(ex), Notes: []string{note}}, nil
}

// certified is the IBP row's certified accuracy (Jia et al.'s measure):
// the share of the clean cell's examples whose prediction no combination
// of substitutions from the first 8 synonyms per word can change (boxes at
// ε = 1).
func (tb *ftmlTable) certified(m *model.Model) (tableCell, error) {
	ex, note := tb.cleanExamples()
	syn, _, err := loadSynonyms(tb.synPath, tb.dataDir, m.Vocab, 8)
	if err != nil {
		return tableCell{}, err
	}
	acc, err := certify(io.Discard, m, syn, ex, 8)
	if err != nil {
		return tableCell{}, err
	}
	return tableCell{Accuracy: 100 * acc, N: len(ex), Notes: []string{note, fmt.Sprintf("IBP certificate, ε = 1, 8 synonyms per word, %s hull", trainedHull(m))}}, nil
}

func (tb *ftmlTable) attack(m *model.Model, def, recipe string) (tableCell, error) {
	rc, err := attack.LookupRecipe(recipe)
	if err != nil {
		return tableCell{}, err
	}
	res := attack.Resources{Synonyms: tb.nb.Restrict(m.Vocab)}
	if rc.Needs(attack.ProtocolFTML).Encoder {
		// The USE stand-in: mean word-vector cosine over --vectors, else
		// over the attacked model's own embedding table.
		tab := &attack.VectorTable{Label: "model embedding table", Vocab: m.Vocab, Dim: m.Net.Emb.W.Value.Shape[1], Data: m.Net.Emb.W.Value.Data}
		if tb.vecPath != "" {
			vs, err := text.LoadVectors(tb.vecPath, m.Vocab)
			if err != nil {
				return tableCell{}, fmt.Errorf("--vectors: %w", err)
			}
			tab = attack.TableFromVectors(filepath.Base(tb.vecPath), m.Vocab, vs)
		}
		res.Encoder = attack.MeanVectorEncoder{Table: tab}
	}
	cfg, err := rc.Build(attack.ProtocolFTML, res)
	if err != nil {
		return tableCell{}, err
	}
	var quickNote string
	if tb.quick {
		quickNote = shrinkSearch(cfg.Attack)
	}
	items := attack.ExamplesOf(tb.ds.Test, attack.SampleOrder(len(tb.ds.Test), tb.passN, tb.seed, true))
	csvPath := filepath.Join(tb.out, def, recipe+".csv")
	_, statErr := os.Stat(csvPath)
	opt := attack.RunOptions{Workers: tb.workers, Seed: tb.seed, CSV: csvPath, Resume: statErr == nil, Progress: tb.stderr}
	rs, err := attack.RunAll(context.Background(), cfg.Attack, attack.FromModel(m), items, opt)
	if err != nil {
		return tableCell{}, err
	}
	sum := attack.Summarize(rs)
	notes := append([]string{cfg.Description}, cfg.Deviations...)
	if quickNote != "" {
		notes = append(notes, quickNote)
	}
	if rc.Needs(attack.ProtocolFTML).Encoder {
		notes = append(notes, "HLA is a deviation: the Universal Sentence Encoder is replaced by mean word-vector cosine (spec §14 A11)")
	}
	// Spec §10: 100·(1 − (n_mis + n_succ)/n) = failed / n.
	return tableCell{Accuracy: 100 * sum.AccuracyUnderAttack, N: sum.N, Summary: sum, Notes: notes}, nil
}

// shrinkSearch halves a population search's population and iterations
// (HLA: also its random initialisation) for --quick: a failed example
// costs the whole budget, and on robust models most examples fail. It says
// what it did, or "" for searches it leaves alone.
func shrinkSearch(a *attack.Attack) string {
	switch s := a.Search.(type) {
	case attack.Genetic:
		s.PopSize, s.Generations = s.PopSize/2, s.Generations/2
		a.Search = s
		return fmt.Sprintf("quick: search budget cut to population %d × %d generations (not the protocol's)", s.PopSize, s.Generations)
	case attack.PSO:
		s.PopSize, s.Iterations = s.PopSize/2, s.Iterations/2
		a.Search = s
		return fmt.Sprintf("quick: search budget cut to population %d × %d iterations (not the protocol's)", s.PopSize, s.Iterations)
	case attack.HLA:
		s.PopSize, s.Generations, s.InitQueries = s.PopSize/2, s.Generations/2, s.InitQueries/5
		a.Search = s
		return fmt.Sprintf("quick: search budget cut to population %d × %d generations, %d initialisation queries (not the protocol's)", s.PopSize, s.Generations, s.InitQueries)
	}
	return ""
}
