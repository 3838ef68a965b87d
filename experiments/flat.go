package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
)

// FLAT's printed values (spec flat.md §12) for the LSTM and CNN rows, in
// the dataset order SST-2, IMDB, AG News, TREC.
var (
	// Table 2, standard accuracy; adv and FLAT rows per training attack.
	flatPaperSA = map[string]string{
		"lstm/base": "84.40 88.03 91.08 90.80", "lstm/adv/textfooler": "82.32 88.79 90.29 87.60",
		"lstm/adv/pwws": "82.59 88.37 91.16 89.60", "lstm/flat/textfooler": "84.79 89.17 91.00 91.00",
		"lstm/flat/pwws": "83.69 88.52 91.37 91.20", "cnn/base": "84.18 88.63 91.32 91.20",
		"cnn/adv/textfooler": "82.15 88.81 90.99 89.20", "cnn/adv/pwws": "83.42 88.89 91.30 90.00",
		"cnn/flat/textfooler": "83.09 88.89 91.64 89.20", "cnn/flat/pwws": "83.31 88.99 91.03 89.20",
	}
	// Table 3: AA, KT, TI with IG, per dataset; models trained with the
	// attack they are attacked with.
	flatPaperIG = map[string]string{
		"textfooler/lstm/base": "5.05 0.46 0.68 0.16 0.53 0.46 45.00 0.76 0.81 44.40 0.62 0.89",
		"textfooler/lstm/adv":  "12.36 0.49 0.68 29.18 0.60 0.58 48.39 0.76 0.82 51.20 0.51 0.87",
		"textfooler/lstm/flat": "17.76 0.58 0.75 31.38 0.66 0.65 54.16 0.82 0.86 55.20 0.68 0.90",
		"textfooler/cnn/base":  "1.98 0.46 0.69 3.72 0.64 0.56 8.74 0.55 0.62 45.20 0.68 0.91",
		"textfooler/cnn/adv":   "2.53 0.52 0.72 16.04 0.71 0.65 15.84 0.55 0.62 52.60 0.71 0.92",
		"textfooler/cnn/flat":  "37.07 0.70 0.82 32.62 0.76 0.75 25.18 0.61 0.67 62.20 0.87 0.96",
		"pwws/lstm/base":       "11.64 0.51 0.71 0.29 0.55 0.48 54.53 0.82 0.86 54.40 0.66 0.90",
		"pwws/lstm/adv":        "18.73 0.57 0.74 23.68 0.63 0.61 61.17 0.84 0.88 64.20 0.61 0.88",
		"pwws/lstm/flat":       "19.66 0.60 0.75 25.00 0.69 0.67 62.41 0.85 0.89 67.80 0.79 0.94",
		"pwws/cnn/base":        "8.29 0.53 0.72 4.36 0.72 0.59 18.86 0.57 0.64 54.20 0.71 0.91",
		"pwws/cnn/adv":         "12.63 0.57 0.73 20.64 0.72 0.68 33.21 0.56 0.63 63.00 0.76 0.92",
		"pwws/cnn/flat":        "14.83 0.58 0.74 20.70 0.73 0.69 71.37 0.91 0.93 65.60 0.77 0.93",
	}
	// Table 8: KT, TI with LIME, per dataset.
	flatPaperLIME = map[string]string{
		"textfooler/lstm/base": "0.33 0.65 0.39 0.50 0.27 0.41 0.20 0.83",
		"textfooler/lstm/adv":  "0.36 0.67 0.39 0.53 0.25 0.39 0.36 0.83",
		"textfooler/lstm/flat": "0.39 0.69 0.41 0.54 0.41 0.52 0.45 0.87",
		"textfooler/cnn/base":  "0.33 0.67 0.44 0.51 0.25 0.37 0.27 0.83",
		"textfooler/cnn/adv":   "0.35 0.68 0.46 0.53 0.25 0.38 0.32 0.84",
		"textfooler/cnn/flat":  "0.39 0.69 0.50 0.56 0.26 0.40 0.40 0.87",
		"pwws/lstm/base":       "0.36 0.67 0.39 0.52 0.26 0.41 0.19 0.82",
		"pwws/lstm/adv":        "0.38 0.68 0.35 0.52 0.26 0.41 0.22 0.82",
		"pwws/lstm/flat":       "0.42 0.71 0.40 0.55 0.27 0.43 0.25 0.83",
		"pwws/cnn/base":        "0.37 0.68 0.43 0.52 0.26 0.39 0.19 0.83",
		"pwws/cnn/adv":         "0.43 0.71 0.47 0.54 0.26 0.41 0.22 0.84",
		"pwws/cnn/flat":        "0.47 0.73 0.51 0.55 0.27 0.42 0.25 0.85",
	}
	// The paper's SST-2 is the sentence-level split (6,920 training
	// sentences), our sst2-sent preset.
	flatPaperColumn = map[string]int{"sst2-sent": 0, "imdb": 1, "agnews": 2, "trec": 3}
)

// flatPaper returns the k-th group of size values of a printed row for the
// dataset, or nil when the paper has no such cell.
func flatPaper(table map[string]string, key, dataset string, size int) []float64 {
	col, ok := flatPaperColumn[dataset]
	row, ok2 := table[key]
	if !ok || !ok2 {
		return nil
	}
	f := strings.Fields(row)
	out := make([]float64, size)
	for i := range out {
		v, err := strconv.ParseFloat(f[col*size+i], 64)
		if err != nil {
			panic(fmt.Sprintf("flat paper table %s: %v", key, err)) // a typo in the literal above
		}
		out[i] = v
	}
	return out
}

// FLATRows are a block's rows: standard training, adversarial rounds with
// cross-entropy, FLAT.
var FLATRows = []string{"base", "adv", "flat"}

// FLATTable configures one block of FLAT's Tables 2, 3 and 8: one dataset,
// one architecture, one training attack; a row per training method, a
// column group per evaluation attack (SA, AA, and KT/TI per
// interpretation method).
type FLATTable struct {
	// Data is the block's dataset; every row trains on it and is attacked
	// on its test split.
	Data pipeline.Data
	// Arch is cnn or lstm, FLAT's models (spec §5).
	Arch string
	// TrainAttack is the attack the adv and FLAT rows train against
	// (textfooler or pwws); Attacks evaluate every row (default
	// TrainAttack; the other one is Table 4's unforeseen attack).
	TrainAttack string
	Attacks     []string
	// Rows are the rows to train and evaluate (FLATRows).
	Rows []string
	// Explain are the interpretation methods of the agreement columns (ig,
	// lime).
	Explain []string
	// N attacks the first N test examples in file order (0: all; -1: the
	// paper's protocol, the whole test set but IMDB's first 10,000).
	N       int
	Workers int
	// FlatLR is FLAT's learning rate (spec: 0.005, which collapsed the word
	// masks on frozen vectors here; spec F16 allows tuning).
	FlatLR float64
	// Tune changes every row's training configuration last (the CLI's
	// --train-args); TuneNote says how, for the table.
	Tune     func(row string, c *pipeline.TrainConfig) error
	TuneNote string
	// Synonyms and WordNet are the attacks' resources (default: under
	// Data.Dir, the system's WordNet).
	Synonyms, WordNet string
	// Use takes a row's model from a directory (trained elsewhere)
	// instead of training it.
	Use map[string]string
	// ByRound also attacks each round's best-dev model of the adv and FLAT
	// rows (ROW/model.roundR, kept by Rounds.KeepRounds) with every attack.
	ByRound bool
	// Out is the block's folder.
	Out string
	// Seeds are the trained instances of every row (nil: one, offset 0):
	// instance k trains with seed 1 + k (initialisation, order, the
	// rounds' attack samples) and is attacked on the same test examples.
	// Instance 0 lives in Out, today's layout; instance k > 0 in Out/seed-k.
	Seeds []int64
	// Log receives progress messages (nil: discarded).
	Log io.Writer
}

// NewFLATTable returns a block with the CLI's defaults.
func NewFLATTable() FLATTable {
	return FLATTable{Data: pipeline.NewData(), Arch: "cnn", TrainAttack: "textfooler", Rows: FLATRows, Explain: []string{"ig"},
		N: -1, Workers: runtime.NumCPU(), FlatLR: 0.001}
}

type flatRun struct {
	FLATTable
	// root is the block's folder; t (and out, its path) the instance
	// being trained or read, seed its offset.
	root, t            *Table
	seed               int64
	out, arch, dataset string
	trainAttack        string
	attacks, methods   []string
	trainArgs          []string // the --train-args note, as words
	n                  int
	byRound            bool
}

func (c FLATTable) check() error {
	bad := func(format string, args ...any) error { return &pipeline.ConfigError{Err: fmt.Errorf(format, args...)} }
	attackOK := func(a string) bool { return a == "textfooler" || a == "pwws" }
	switch {
	case c.Arch != "cnn" && c.Arch != "lstm":
		return bad("--model %q: want cnn or lstm", c.Arch)
	case !attackOK(c.TrainAttack):
		return bad("--attack %q: want textfooler or pwws", c.TrainAttack)
	case len(c.Rows) == 0:
		return bad("--rows is empty")
	case c.N < -1:
		return bad("--n %d must be ≥ 0 (0 = the whole test set; -1, the default, = the paper's protocol)", c.N)
	case c.Workers < 1:
		return bad("--workers %d must be at least 1", c.Workers)
	case !(c.FlatLR > 0):
		return bad("--flat-lr %g must be a positive number", c.FlatLR)
	}
	if err := c.Data.Check(); err != nil {
		return err
	}
	if c.Out == "" {
		return bad("--out is required")
	}
	if err := CheckSeeds(c.Seeds); err != nil {
		return &pipeline.ConfigError{Err: err}
	}
	if len(c.Use) > 0 && len(SeedsOrZero(c.Seeds)) > 1 {
		return bad("--use takes one model per row: it cannot give several seeds' instances")
	}
	for _, a := range c.Attacks {
		if !attackOK(a) {
			return bad("--attacks: %q: want textfooler or pwws", a)
		}
	}
	for _, r := range c.Rows {
		if !contains(FLATRows, r) {
			return bad("--rows: %q: want base, adv or flat", r)
		}
	}
	for _, m := range c.Explain {
		if m != "ig" && m != "lime" {
			return bad("--explain: %q: want ig, lime or none", m)
		}
	}
	for row, dir := range c.Use {
		if !contains(FLATRows, row) || dir == "" {
			return bad("--use %s=%s: want ROW=DIR with ROW base, adv or flat", row, dir)
		}
	}
	return nil
}

func (c FLATTable) open() (*flatRun, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	root := &Table{Dir: c.Out, Log: c.Log, Name: "flat-table"}
	ft := &flatRun{FLATTable: c, root: root, t: root, out: c.Out, arch: c.Arch,
		dataset: c.Data.Preset, trainAttack: c.TrainAttack, attacks: c.Attacks, methods: c.Explain, byRound: c.ByRound,
		trainArgs: strings.Fields(c.TuneNote)}
	if len(ft.attacks) == 0 {
		ft.attacks = []string{c.TrainAttack}
	}
	ft.n = FLATAttackN(ft.dataset, c.N)
	ft.use(ft.seeds()[0])
	return ft, nil
}

// seeds are the instances' offsets ({0} when none are given).
func (ft *flatRun) seeds() []int64 { return SeedsOrZero(ft.Seeds) }

// use makes the instance of the seed offset the current one.
func (ft *flatRun) use(seed int64) {
	ft.seed, ft.t = seed, ft.root.Instance(seed)
	ft.out = ft.t.Dir
}

// RunFLATTable trains and attacks the block's rows, resuming what a
// previous run into the same folder left, and returns the table (written
// to table.md after every row).
func RunFLATTable(ctx context.Context, c FLATTable) (*FLATReport, error) {
	ft, err := c.open()
	if err != nil {
		return nil, err
	}
	for _, seed := range ft.seeds() {
		ft.use(seed)
		for _, r := range ft.Rows {
			if err := ft.t.WithRow(r, func() error { return ft.runRow(ctx, r) }); err != nil {
				return nil, fmt.Errorf("flat-table: %w", err)
			}
			if _, err := ft.report(true); err != nil {
				return nil, err
			}
		}
	}
	return ft.report(true)
}

// ReportFLATTable reads the block from the cells already there, training,
// attacking and writing nothing (safe beside a running block).
func ReportFLATTable(c FLATTable) (*FLATReport, error) {
	ft, err := c.open()
	if err != nil {
		return nil, err
	}
	return ft.report(false)
}

// runRow trains and attacks one row.
func (ft *flatRun) runRow(ctx context.Context, r string) error {
	if err := ft.train(ctx, r); err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	for _, a := range ft.attacks {
		if err := ft.evaluate(ctx, r, a); err != nil {
			return fmt.Errorf("%s, %s: %w", r, a, err)
		}
	}
	if ft.byRound && r != "base" {
		if err := ft.evaluateRounds(ctx, r); err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
	}
	return nil
}

// tableRows are the rows the table shows, in its order: those this run
// asks for and those another run has trained into the same folder.
func (ft *flatRun) tableRows() []string {
	var rows []string
	for _, r := range FLATRows {
		if contains(ft.Rows, r) || fileExists(ft.t.Path(r, "trained.json")) {
			rows = append(rows, r)
		}
	}
	return rows
}

// FLATAttackN resolves a block's N: given (≥ 0) it stands; by default the
// FLAT protocol attacks the whole test set, except on IMDB, where the
// reference command attacks the first 10,000 of its 25,000 test reviews
// (spec F14).
func FLATAttackN(dataset string, n int) int {
	if n != -1 {
		return n
	}
	if dataset == "imdb" {
		return 10000
	}
	return 0
}

// rowRecord is what ROW/trained.json records about how a row's model was
// made, so that a rerun asking for something else is refused.
type rowRecord struct {
	Identity map[string]any `json:"identity,omitempty"`
	Used     string         `json:"used,omitempty"`
	// Args are the train arguments records of earlier versions held.
	Args []string `json:"train_args,omitempty"`
}

func (r rowRecord) String() string {
	if r.Used != "" {
		return "the model given with --use (" + r.Used + ")"
	}
	return "the training configuration " + jsonText(r.Identity)
}

// rowConfig is a row's training configuration (spec flat.md §5): FLAT's
// Kim CNN with 200 filters per width, or its unidirectional LSTM with 300
// units, tanh and max pooling; dropout 0.2 for both; base at learning rate
// 0.01, adv at its defense's own, FLAT at FlatLR.
func (ft *flatRun) rowConfig(row string) (pipeline.TrainConfig, error) {
	tc := pipeline.NewTrainConfig()
	tc.Data = ft.Data
	tc.Net.Arch, tc.Net.Dropout = ft.arch, 0.2
	if ft.arch == "cnn" {
		tc.Net.Filters = 200
	} else {
		tc.Net.Hidden, tc.Net.Tanh = 300, true
	}
	switch row {
	case "base":
		tc.Options.LR = 0.01
	case "adv", "flat":
		tc.Defense.Name = row
		tc.Defense.Rounds.Attack = ft.trainAttack
		tc.Defense.Synonyms, tc.Defense.Rounds.WordNet = ft.Synonyms, ft.WordNet
		if row == "flat" {
			tc.Options.LR, tc.DefenseLR = ft.FlatLR, false
		}
	}
	if ft.Tune != nil {
		if err := ft.Tune(row, &tc); err != nil {
			return tc, err
		}
	}
	// Another instance: another initialisation, order and rounds' samples.
	tc.Options.Seed += ft.seed
	return tc, nil
}

// train trains a row unless a finished model of the same configuration is
// there; an interrupted training resumes from its checkpoints.
func (ft *flatRun) train(ctx context.Context, row string) error {
	dir := ft.t.RowDir(row)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tc, err := ft.rowConfig(row)
	if err != nil {
		return err
	}
	want := rowRecord{Used: ft.Use[row]}
	if want.Used == "" {
		if want.Identity, err = identity(tc); err != nil {
			return err
		}
	}
	var done rowRecord
	if ok, err := ft.t.ReadJSON(row, "trained.json", &done); err != nil {
		return err
	} else if ok {
		if done.Args != nil {
			return fmt.Errorf("%s was made by an earlier textarmor (recorded as train arguments); remove %s to redo it", row, dir)
		}
		if !reflect.DeepEqual(done, want) {
			return fmt.Errorf("%s was made from %s, this run asks for %s; remove %s to redo it", row, done, want, dir)
		}
		ft.t.logf("%s: model exists, skipping training", row)
		return nil
	}
	if want.Used != "" {
		return ft.adopt(row, want)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "train.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	log := io.Writer(logf)
	if ft.Log != nil {
		log = io.MultiWriter(logf, ft.Log)
	}
	tc.Options.Out, tc.Options.Resume, tc.Log = filepath.Join(dir, "model"), true, log
	tc.Defense.Rounds.Workers = ft.Workers
	ft.t.logf("%s: training %s", row, jsonText(want.Identity))
	rep, err := pipeline.Train(ctx, tc)
	if err != nil {
		return err
	}
	if rep.Test != nil {
		fmt.Fprint(logf, rep.Test.Format())
	}
	return ft.t.WriteJSON(row, "trained.json", want)
}

// adopt copies a model trained elsewhere into a row, after checking that
// it is the row's kind of model: the table's architecture and dataset, and
// a word mask exactly for the FLAT row.
func (ft *flatRun) adopt(row string, rec rowRecord) error {
	m, err := model.Load(rec.Used)
	if err != nil {
		return fmt.Errorf("--use %s=%s: %w", row, rec.Used, err)
	}
	switch {
	case m.Net.Cfg.Arch != ft.arch:
		return fmt.Errorf("--use %s=%s: a %s model, the table is %s", row, rec.Used, m.Net.Cfg.Arch, ft.arch)
	case m.Net.Cfg.Mask != (row == "flat"):
		return fmt.Errorf("--use %s=%s: word mask %v, the %s row needs %v", row, rec.Used, m.Net.Cfg.Mask, row, row == "flat")
	}
	if ds, _ := m.Training["dataset"].(string); ft.dataset != "" && ds != "" && ds != ft.dataset {
		return fmt.Errorf("--use %s=%s: trained on %s, the table is on %s", row, rec.Used, ds, ft.dataset)
	}
	if err := m.Save(ft.t.Path(row, "model")); err != nil {
		return err
	}
	ft.t.logf("%s: model taken from %s", row, rec.Used)
	return ft.t.WriteJSON(row, "trained.json", rec)
}

// evaluate attacks a row's model with one recipe, once per interpretation
// method (the attack itself runs once: later runs resume its CSV).
func (ft *flatRun) evaluate(ctx context.Context, row, recipe string) error {
	return ft.attackModel(ctx, row, ft.t.Path(row, "model"), ft.t.Path(row, recipe), recipe, ft.methods)
}

// evaluateRounds attacks each round's model a row's training kept
// (ROW/model.roundR) with every attack, into ROW/roundR.ATTACK.{csv,json}.
func (ft *flatRun) evaluateRounds(ctx context.Context, row string) error {
	rounds, err := ft.roundModels(row)
	if err != nil {
		return err
	}
	if len(rounds) == 0 {
		ft.t.logf("%s: --by-round: no round models kept (train the row with --train-args --round-keep)", row)
	}
	for _, r := range rounds {
		for _, a := range ft.attacks {
			if err := ft.attackModel(ctx, row, ft.t.Path(row, fmt.Sprintf("model.round%d", r)), ft.t.Path(row, fmt.Sprintf("round%d.%s", r, a)), a, nil); err != nil {
				return fmt.Errorf("round %d, %s: %w", r, a, err)
			}
		}
	}
	return nil
}

// roundModels lists the rounds R whose model ROW/model.roundR exists, in order.
func (ft *flatRun) roundModels(row string) ([]int, error) {
	var rounds []int
	for r := 1; ; r++ {
		_, err := os.Stat(ft.t.Path(row, fmt.Sprintf("model.round%d", r)))
		if errors.Is(err, os.ErrNotExist) {
			return rounds, nil
		}
		if err != nil {
			return nil, err
		}
		rounds = append(rounds, r)
	}
}

// attackModel runs one attack on a model, once per interpretation method,
// into BASE.csv and BASE[.METHOD].json (the attack itself runs once: later
// runs resume its CSV).
func (ft *flatRun) attackModel(ctx context.Context, row, modelDir, base, recipe string, methods []string) error {
	if err := ClaimCells(base, modelDir); err != nil {
		return err
	}
	if len(methods) == 0 {
		methods = []string{""}
	}
	for _, m := range methods {
		name := base
		if m != "" {
			name += "." + m
		}
		path := name + ".json"
		if fresh, err := ft.cellFresh(path); err != nil {
			return err
		} else if fresh {
			continue
		}
		ac := pipeline.NewAttackConfig()
		ac.Model, ac.Data, ac.Recipe, ac.Protocol, ac.N, ac.Workers = modelDir, ft.Data, recipe, "flat", ft.n, ft.Workers
		ac.CSV, ac.Resume = base+".csv", fileExists(base+".csv")
		ac.Explain.Method, ac.Synonyms, ac.Log = m, ft.Synonyms, ft.Log
		if ft.WordNet != "" {
			ac.WordNet = ft.WordNet
		}
		ft.t.logf("%s: attacking %s with %s (protocol flat, n %d, explain %q)", row, modelDir, recipe, ft.n, m)
		rep, err := pipeline.Attack(ctx, ac)
		if err != nil {
			return err
		}
		// The summary plus the N it was run for, so that a cell of an
		// earlier run with another N is not taken for this one.
		// (Through JSON, so that the file is the command's --json object.)
		var cell map[string]any
		raw, err := json.Marshal(rep.JSON())
		if err == nil {
			err = json.Unmarshal(raw, &cell)
		}
		if err != nil {
			return fmt.Errorf("attack summary: %w", err)
		}
		cell["bench_n"] = ft.n
		if err := WriteJSON(path, cell); err != nil {
			return err
		}
	}
	return nil
}
