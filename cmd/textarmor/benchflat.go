package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/model"
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

// flatArch are FLAT's models as `train` flags (spec flat.md §5): Kim CNN
// with 200 filters per width, and the unidirectional LSTM with 300 units,
// tanh and max pooling; dropout 0.2 for both.
var flatArch = map[string][]string{
	"cnn":  {"--model", "cnn", "--filters", "200", "--dropout", "0.2"},
	"lstm": {"--model", "lstm", "--hidden", "300", "--tanh", "--dropout", "0.2"},
}

type flatTable struct {
	out, arch, trainAttack string
	rows, attacks, methods []string
	dataArgs, synArgs      []string // forwarded to train and attack; synArgs only where synonyms are used
	prepArgs               []string // preprocessing flags, forwarded to train
	trainArgs              []string
	flatLR                 string
	n, workers             int
	report                 bool // --report: print the table from the files there, nothing else
	byRound                bool // --by-round: also attack the rounds' models --keep-rounds kept
	dataset                string
	use                    map[string]string // row → a model trained elsewhere
	stderr                 io.Writer
}

// rowRecord is what DIR/ROW/trained.json records about how a row's model
// was made, so that a rerun asking for something else is refused.
type rowRecord struct {
	Args []string `json:"train_args,omitempty"`
	Used string   `json:"used,omitempty"`
}

func (r rowRecord) String() string {
	if r.Used != "" {
		return "the model given with --use (" + r.Used + ")"
	}
	return "`train " + strings.Join(r.Args, " ") + "`"
}

// flatCell is what the table reads from one attack run's JSON summary.
type flatCell struct {
	OriginalAccuracy float64 `json:"original_accuracy"`
	AfterAttack      float64 `json:"accuracy_under_attack"`
	N                int     `json:"n"`
	KendallTau       float64 `json:"kendall_tau"`
	TopK             float64 `json:"topk_intersection"`
	// The agreement's standard errors; absent (nil) in summaries written
	// before they were. AA's is derived from AA and N.
	KendallTauSE *float64 `json:"kendall_tau_se"`
	TopKSE       *float64 `json:"topk_intersection_se"`
	Explain      *struct {
		Pairs int `json:"pairs"`
	} `json:"explain"`
}

// runBenchFLATTable implements `bench flat-table`: FLAT's Tables 2, 3 and
// 8 for one dataset, model and training attack (base, adv and FLAT rows).
func runBenchFLATTable(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench flat-table", "bench flat-table (--dataset NAME | --train FILE --test FILE) --model cnn|lstm --attack textfooler|pwws --out DIR [flags]", stderr)
	ft := &flatTable{stderr: stderr}
	var df dataFlags
	df.register(fs, true)
	var rows, attacks, methods, trainArgs, synPath, wnDir string
	var use specList
	fs.StringVar(&ft.out, "out", "", "output folder: one folder per row (model, training log, attack CSVs and JSON summaries), table.md, table.json; rerun to resume (required)")
	fs.StringVar(&ft.arch, "model", "cnn", "architecture: cnn or lstm, FLAT's (spec §5)")
	fs.StringVar(&ft.trainAttack, "attack", "textfooler", "attack the adv and FLAT rows train against: textfooler or pwws")
	fs.StringVar(&attacks, "attacks", "", "attacks to evaluate every row with, comma-separated (default: --attack; the other one is Table 4's unforeseen attack)")
	fs.StringVar(&rows, "rows", "base,adv,flat", "rows to train and evaluate")
	fs.StringVar(&methods, "explain", "ig", "interpretation agreement (KT, TI) with ig, lime or both (ig,lime); \"none\" for none")
	fs.IntVar(&ft.n, "n", -1, "attacked test examples, the first N in file order (default: the paper's protocol, the whole test set but IMDB's first 10,000; 0 = the whole test set)")
	fs.IntVar(&ft.workers, "workers", runtime.NumCPU(), "examples attacked in parallel, in the rounds' attacks and in the evaluation")
	fs.StringVar(&trainArgs, "train-args", "", "extra train flags for every row, space-separated (e.g. \"--embeddings V --freeze-embeddings\"); they come last and override the defaults")
	fs.StringVar(&ft.flatLR, "flat-lr", "0.001", "FLAT's learning rate (spec: 0.005, which collapsed the word masks on frozen vectors here; spec F16 allows tuning)")
	fs.StringVar(&synPath, "synonyms", "", "counter-fitted neighbour JSON for the attacks (default: under --data)")
	fs.StringVar(&wnDir, "wordnet", "", "WordNet dict directory for the attacks (default: the system's)")
	fs.Var(&use, "use", "ROW=DIR: take a row's model from DIR (trained elsewhere, e.g. with textarmor train) instead of training it; repeatable")
	fs.BoolVar(&ft.byRound, "by-round", false, "also attack each round's best-dev model of the adv and FLAT rows (ROW/model.roundR, kept by --train-args --keep-rounds) with every --attacks on the same examples, and print their AA by round (no interpretations)")
	fs.BoolVar(&ft.report, "report", false, "print the table and its checks from the cells already there, training, attacking and writing nothing (safe beside a running block)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	flatLR, lrErr := strconv.ParseFloat(ft.flatLR, 64)
	if err := checkNumbers(append([]numRule{
		{ft.n >= -1, "n", ft.n, "≥ 0 (0 = the whole test set; -1, the default, = the paper's protocol)"},
		workersRule("workers", ft.workers),
		{lrErr == nil && finite(flatLR) && flatLR > 0, "flat-lr", ft.flatLR, "a positive number"},
	}, df.numbers()...)...); err != nil {
		return err
	}
	if ft.out == "" {
		return usageError{errors.New("--out is required")}
	}
	if _, ok := flatArch[ft.arch]; !ok {
		return usageError{fmt.Errorf("--model %q: want cnn or lstm", ft.arch)}
	}
	if !flatAttack(ft.trainAttack) {
		return usageError{fmt.Errorf("--attack %q: want textfooler or pwws", ft.trainAttack)}
	}
	if ft.attacks = splitList(attacks); len(ft.attacks) == 0 {
		ft.attacks = []string{ft.trainAttack}
	}
	for _, a := range ft.attacks {
		if !flatAttack(a) {
			return usageError{fmt.Errorf("--attacks: %q: want textfooler or pwws", a)}
		}
	}
	for _, r := range splitList(rows) {
		if !flatRow(r) {
			return usageError{fmt.Errorf("--rows: %q: want base, adv or flat", r)}
		}
		ft.rows = append(ft.rows, r)
	}
	if len(ft.rows) == 0 {
		return usageError{errors.New("--rows is empty")}
	}
	for _, m := range splitList(methods) {
		switch m {
		case "none":
		case "ig", "lime":
			ft.methods = append(ft.methods, m)
		default:
			return usageError{fmt.Errorf("--explain: %q: want ig, lime or none", m)}
		}
	}
	ft.use = map[string]string{}
	for _, u := range use {
		row, dir, ok := strings.Cut(u, "=")
		if !ok || !flatRow(row) || dir == "" {
			return usageError{fmt.Errorf("--use %q: want ROW=DIR with ROW base, adv or flat", u)}
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		ft.use[row] = abs
	}
	ft.dataset = df.Preset // before flatAttackN, whose default depends on it
	ft.n = flatAttackN(ft.dataset, ft.n)
	ft.trainArgs = strings.Fields(trainArgs)
	// The data flags given are forwarded to every train and attack run.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "dataset", "data", "train", "dev", "test", "format", "text-col", "label-col", "skip-bad":
			ft.dataArgs = append(ft.dataArgs, "--"+f.Name+"="+f.Value.String())
		case "synonyms", "wordnet":
			ft.synArgs = append(ft.synArgs, "--"+f.Name+"="+f.Value.String())
		case "tokenizer", "max-len", "min-count", "max-vocab": // the model keeps them; attack reads them from it
			ft.prepArgs = append(ft.prepArgs, "--"+f.Name+"="+f.Value.String())
		}
	})
	if ft.report {
		return ft.writeTable(stdout)
	}
	for _, r := range ft.rows {
		if err := ft.runRow(r); err != nil {
			return err
		}
		if err := ft.writeTable(io.Discard); err != nil {
			return err
		}
	}
	return ft.writeTable(stdout)
}

// runRow trains and attacks one row under the row folder's lock: two runs
// may share --out when they work on different rows (one core each, say),
// and the table either writes shows every row there.
func (ft *flatTable) runRow(r string) error {
	unlock, err := checkpoint.LockDir(filepath.Join(ft.out, r))
	if err != nil {
		return fmt.Errorf("flat-table: %s: %w", r, err)
	}
	defer unlock()
	if err := ft.train(r); err != nil {
		return fmt.Errorf("flat-table: %s: %w", r, err)
	}
	for _, a := range ft.attacks {
		if err := ft.evaluate(r, a); err != nil {
			return fmt.Errorf("flat-table: %s, %s: %w", r, a, err)
		}
	}
	if ft.byRound && r != "base" {
		if err := ft.evaluateRounds(r); err != nil {
			return fmt.Errorf("flat-table: %s: %w", r, err)
		}
	}
	return nil
}

// tableRows are the rows the table shows, in its order: those this run
// asks for and those another run has trained into the same folder.
func (ft *flatTable) tableRows() []string {
	var rows []string
	for _, r := range []string{"base", "adv", "flat"} {
		_, err := os.Stat(filepath.Join(ft.out, r, "trained.json"))
		if slices.Contains(ft.rows, r) || err == nil {
			rows = append(rows, r)
		}
	}
	return rows
}

func flatRow(r string) bool    { return r == "base" || r == "adv" || r == "flat" }
func flatAttack(a string) bool { return a == "textfooler" || a == "pwws" }

// rowArgs are the `train` arguments of a row that decide its model: without
// --out, --resume and the attack workers (results do not depend on them).
func (ft *flatTable) rowArgs(row string) []string {
	args := append([]string{}, flatArch[ft.arch]...)
	args = append(append(args, ft.dataArgs...), ft.prepArgs...)
	switch row {
	case "base":
		args = append(args, "--lr", "0.01")
	case "adv":
		args = append(args, "--defense", "adv", "--attack", ft.trainAttack)
		args = append(args, ft.synArgs...)
	case "flat":
		args = append(args, "--defense", "flat", "--attack", ft.trainAttack, "--lr", ft.flatLR)
		args = append(args, ft.synArgs...)
	}
	return append(args, rowTrainArgs(row, ft.trainArgs)...)
}

// rowTrainArgs drops from the shared --train-args the flags a row's
// defense does not take (train refuses a defense flag given to another
// defense): the rounds' flags for base, FLAT's own for adv.
func rowTrainArgs(row string, args []string) []string {
	drop := map[string]bool{}
	switch row {
	case "base":
		for _, f := range flatOnly {
			drop[f] = true
		}
	case "adv":
		drop["beta"], drop["gamma"], drop["entropy-reduction"] = true, true, true
	}
	return withoutFlags(args, drop)
}

// withoutFlag drops one flag (with its value) from train arguments.
func withoutFlag(args []string, name string) []string {
	return withoutFlags(args, map[string]bool{name: true})
}

// withoutFlags drops the named flags, with their values, from train
// arguments (--name value or --name=value; keep-rounds is boolean).
func withoutFlags(args []string, drop map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || !drop[name] {
			out = append(out, args[i])
			continue
		}
		if !hasValue && name != "keep-rounds" && i+1 < len(args) {
			i++ // the flag's value
		}
	}
	return out
}

// train trains a row unless a finished model with the same arguments is
// there; an interrupted training resumes from its checkpoints.
func (ft *flatTable) train(row string) error {
	dir := filepath.Join(ft.out, row)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	args := ft.rowArgs(row)
	want := rowRecord{Args: args}
	if src, ok := ft.use[row]; ok {
		want = rowRecord{Used: src}
	}
	marker := filepath.Join(dir, "trained.json")
	if raw, err := os.ReadFile(marker); err == nil {
		var done rowRecord
		if err := json.Unmarshal(raw, &done); err != nil {
			return fmt.Errorf("%s: %w", marker, err)
		}
		done.Args = withoutFlag(done.Args, "attack-workers") // records before 2026-11-24 kept it
		if !reflect.DeepEqual(done, want) {
			return fmt.Errorf("%s was made from %s, this run asks for %s; remove %s to redo it", row, done, want, dir)
		}
		fmt.Fprintf(ft.stderr, "flat-table: %s: model exists, skipping training\n", row)
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
	full := append([]string{"--out", filepath.Join(dir, "model"), "--resume", "--quiet"}, args...)
	if row != "base" {
		full = append(full, "--attack-workers", fmt.Sprint(ft.workers))
	}
	fmt.Fprintf(ft.stderr, "flat-table: %s: textarmor train %s\n", row, strings.Join(full, " "))
	fmt.Fprintf(logf, "textarmor train %s\n", strings.Join(full, " "))
	if err := runTrain(full, logf, io.MultiWriter(logf, ft.stderr)); err != nil {
		return err
	}
	return writeJSON(marker, want)
}

// adopt copies a model trained elsewhere into a row, after checking that
// it is the row's kind of model: the table's architecture and dataset, and a
// word mask exactly for the FLAT row.
func (ft *flatTable) adopt(row string, rec rowRecord) error {
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
	dir := filepath.Join(ft.out, row)
	if err := m.Save(filepath.Join(dir, "model")); err != nil {
		return err
	}
	fmt.Fprintf(ft.stderr, "flat-table: %s: model taken from %s\n", row, rec.Used)
	return writeJSON(filepath.Join(dir, "trained.json"), rec)
}

// evaluate attacks a row's model with one recipe, once per interpretation
// method (the attack itself runs once: later runs resume its CSV).
func (ft *flatTable) evaluate(row, recipe string) error {
	dir := filepath.Join(ft.out, row)
	return ft.attackModel(row, filepath.Join(dir, "model"), filepath.Join(dir, recipe), recipe, ft.methods)
}

// evaluateRounds attacks each round's model a row's training kept
// (ROW/model.roundR) with every attack, into ROW/roundR.ATTACK.{csv,json}.
func (ft *flatTable) evaluateRounds(row string) error {
	rounds, err := ft.roundModels(row)
	if err != nil {
		return err
	}
	if len(rounds) == 0 {
		fmt.Fprintf(ft.stderr, "flat-table: %s: --by-round: no round models kept (train the row with --train-args --keep-rounds)\n", row)
	}
	dir := filepath.Join(ft.out, row)
	for _, r := range rounds {
		for _, a := range ft.attacks {
			if err := ft.attackModel(row, filepath.Join(dir, fmt.Sprintf("model.round%d", r)), filepath.Join(dir, fmt.Sprintf("round%d.%s", r, a)), a, nil); err != nil {
				return fmt.Errorf("round %d, %s: %w", r, a, err)
			}
		}
	}
	return nil
}

// roundModels lists the rounds R whose model ROW/model.roundR exists, in order.
func (ft *flatTable) roundModels(row string) ([]int, error) {
	var rounds []int
	for r := 1; ; r++ {
		_, err := os.Stat(filepath.Join(ft.out, row, fmt.Sprintf("model.round%d", r)))
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
func (ft *flatTable) attackModel(row, modelDir, base, recipe string, methods []string) error {
	if err := claimCells(base, modelDir); err != nil {
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
		csv := base + ".csv"
		args := []string{"--model", modelDir, "--recipe", recipe, "--protocol", "flat", "--n", fmt.Sprint(ft.n),
			"--workers", fmt.Sprint(ft.workers), "--json", "--quiet", "--out", csv}
		if _, err := os.Stat(csv); err == nil {
			args = append(args, "--resume")
		}
		if m != "" {
			args = append(args, "--explain", m)
		}
		args = append(append(args, ft.dataArgs...), ft.synArgs...)
		fmt.Fprintf(ft.stderr, "flat-table: %s: textarmor attack %s\n", row, strings.Join(args, " "))
		var out bytes.Buffer
		if err := runAttack(args, &out, ft.stderr); err != nil {
			return err
		}
		// The summary plus the --n it was run for, so that a cell of an
		// earlier run with another --n is not taken for this one.
		var cell map[string]any
		if err := json.Unmarshal(out.Bytes(), &cell); err != nil {
			return fmt.Errorf("attack summary: %w", err)
		}
		cell["bench_n"] = ft.n
		if err := writeJSON(path, cell); err != nil {
			return err
		}
	}
	return nil
}

// claimCells records which model the cells BASE.csv and BASE*.json are
// attacks on (BASE.model: its weights digest), and refuses cells made on
// other weights: a resumed attack must not mix two models' results, nor a
// finished summary stand for a model it was not made on. Cells from before
// the record was kept are taken as they are.
func claimCells(base, modelDir string) error {
	digest, err := checkpoint.WeightsDigest(modelDir)
	if err != nil {
		return err
	}
	record := base + ".model"
	prev, err := os.ReadFile(record)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return checkpoint.WriteFileAtomic(record, []byte(digest+"\n"), 0o644)
	case err != nil:
		return err
	}
	if got := strings.TrimSpace(string(prev)); got != digest {
		return fmt.Errorf("%s.csv and its summaries are attacks on other weights (%.12s…) than %s has now (%.12s…): remove %s.* to attack it afresh",
			base, got, modelDir, digest, base)
	}
	return nil
}

// cellFresh reports whether an attack summary exists for this run's --n. A
// file from an earlier run with another --n is stale: the attack resumes
// from its CSV (the first N of the same file order) and the file is
// rewritten. Files written before bench_n was recorded count when they
// cover --n examples, or whenever the whole test set is asked for.
func (ft *flatTable) cellFresh(path string) (bool, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	var c struct {
		N      int  `json:"n"`
		BenchN *int `json:"bench_n"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w (delete it to recompute the cell)", path, err)
	}
	fresh := (c.BenchN != nil && *c.BenchN == ft.n) || (c.BenchN == nil && (ft.n == 0 || c.N == ft.n))
	if !fresh {
		fmt.Fprintf(ft.stderr, "flat-table: %s covers %d examples, not this run's --n %d: recomputing\n", path, c.N, ft.n)
	}
	return fresh, nil
}

// readCell reads one attack summary; ok is false when it is not there yet.
func (ft *flatTable) readCell(row, name string) (flatCell, bool, error) {
	var c flatCell
	raw, err := os.ReadFile(filepath.Join(ft.out, row, name+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return c, false, nil
	}
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil {
		return c, false, fmt.Errorf("%s/%s.json: %w", row, name, err)
	}
	return c, true, nil
}

// attackCell returns any summary of a row's attack with one recipe (every
// method's run shares the attack, so they agree on SA and AA), whichever
// --explain methods this run asks for.
func (ft *flatTable) attackCell(row, recipe string) (flatCell, bool, error) {
	for _, m := range []string{"", "ig", "lime"} {
		name := recipe
		if m != "" {
			name += "." + m
		}
		if c, ok, err := ft.readCell(row, name); err != nil || ok {
			return c, ok, err
		}
	}
	return flatCell{}, false, nil
}
