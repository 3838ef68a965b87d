package experiments

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/advsts"
	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/senteval"
	"github.com/textarmor/textarmor/tensor"
)

// RobustEmbedTable configures RobustEmbed's tables (spec robustembed.md
// §9) from one checkpoint: a row for the checkpoint as it is ("start") and
// one per training method (simcse, robustembed), Table 1's STS columns
// and Table 4's AdvSTS columns. Every unit is a file under Out: a row's
// model and record, its STS cell, one cell and one CSV-free JSON per
// AdvSTS attack; a rerun resumes and refuses rows of other settings.
type RobustEmbedTable struct {
	DataDir, Out string
	// Init is the checkpoint every row starts from ("" = the shared
	// all-MiniLM-L6-v2 under DataDir).
	Init string
	// Rows: "start", "simcse", "robustembed".
	Rows []string
	// Train is the training rows' configuration (Method, Init, DataDir and
	// Options.Out are set per row).
	Train pipeline.EmbedTrainConfig
	// STSSets are Table 1's columns (eval-sts names); TransferTasks Table
	// 2's (eval-transfer names; nil: no Table 2).
	STSSets, TransferTasks []string
	// AdvAttacks are Table 4's recipes, run on the first AdvN pairs of
	// each AdvSets test split (stsb, sickr); MLM is the masked-LM
	// directory bae and bert-attack need.
	AdvAttacks, AdvSets []string
	AdvN                int
	MLM                 string
	// Table 3: each row's encoder initialises a classifier fine-tuned on
	// each of Tasks (dataset presets) with the spec's §10.12 settings on a
	// seeded TrainN of the training split (0: all), then attacked with
	// TaskAttacks on the first TaskN test examples of a seeded order
	// (each of Reps repetitions draws its own order).
	Tasks, TaskAttacks []string
	TrainN, TaskN      int
	Reps               int
	// TaskMaxLen is the classifiers' length in word pieces (spec: 128;
	// IMDB's twice it, 256).
	TaskMaxLen int
	Seed       int64
	Workers    int
	Log        io.Writer
}

// NewRobustEmbedTable is the full configuration: the three rows, the
// seven STS sets, AdvSTS with TextFooler, PWWS and TextBugger on 200
// pairs of each test split.
func NewRobustEmbedTable() RobustEmbedTable {
	return RobustEmbedTable{Out: "robustembed-table", Rows: []string{"start", "simcse", "robustembed"}, Train: pipeline.NewEmbedTrainConfig(),
		STSSets:       []string{"sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"},
		TransferTasks: []string{"mr", "cr", "subj", "mpqa", "sst2", "mrpc"},
		AdvAttacks:    []string{"textfooler", "pwws", "textbugger"}, AdvSets: []string{"stsb", "sickr"}, AdvN: 200,
		Tasks: []string{"mr", "sst2", "mrpc", "snli", "imdb"}, TaskAttacks: []string{"textfooler", "pwws", "textbugger"}, TrainN: 2000, TaskN: 100, Reps: 1, TaskMaxLen: 128,
		Workers: runtime.NumCPU()}
}

// RobustEmbedReport is the tables as they stand.
type RobustEmbedReport struct {
	Markdown string
	STS      map[string]map[string]float64  // row → set → Spearman ×100
	Transfer map[string]map[string]float64  // row → task → accuracy ×100
	Adv      map[string]map[string]advCell  // row → attack/set → cell
	Task     map[string]map[string]taskCell // row → task/attack → Table 3 cell
	Claims   []Claim                        // the paper's orderings with their verdicts
	Rows     []string
}

type advCell struct {
	N, Skipped, Successful, Failed int
	ASR                            float64
	PearsonClean, PearsonAttacked  float64
}

// taskCell is a Table 3 cell: the mean over repetitions.
type taskCell struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"`          // clean, or under attack
	ASR      float64 `json:"asr,omitempty"`     // successful / (successful + failed), ×100
	Queries  float64 `json:"queries,omitempty"` // per attacked example
	Reps     int     `json:"reps,omitempty"`
}

func (c *RobustEmbedTable) init() string {
	if c.Init != "" {
		return c.Init
	}
	return filepath.Join(c.DataDir, "models", "all-MiniLM-L6-v2")
}

func (c *RobustEmbedTable) check() error {
	bad := func(format string, args ...any) error { return &pipeline.ConfigError{Err: fmt.Errorf(format, args...)} }
	for _, r := range c.Rows {
		if r != "start" && r != "simcse" && r != "robustembed" {
			return bad("--rows: %q (valid: start, simcse, robustembed)", r)
		}
	}
	for _, s := range c.AdvSets {
		if s != "stsb" && s != "sickr" {
			return bad("--adv-sets: %q (valid: stsb, sickr)", s)
		}
	}
	for _, a := range c.AdvAttacks {
		if _, err := attack.LookupRecipe(a); err != nil {
			return &pipeline.ConfigError{Err: err}
		}
	}
	for _, task := range c.TransferTasks {
		if !slices.Contains(senteval.TaskNames, task) {
			return bad("--transfer-tasks: %q (valid: %s)", task, strings.Join(senteval.TaskNames, ", "))
		}
	}
	for _, a := range c.TaskAttacks {
		if _, err := attack.LookupRecipe(a); err != nil {
			return &pipeline.ConfigError{Err: err}
		}
	}
	for _, d := range c.Tasks {
		if _, err := dataset.LookupPreset(d); err != nil {
			return &pipeline.ConfigError{Err: err}
		}
	}
	switch {
	case c.TrainN < 0 || c.TaskN < 1 || c.Reps < 1 || c.TaskMaxLen < 2:
		return bad("--train-n %d must be ≥ 0, --task-n %d and --reps %d at least 1, the task length %d at least 2", c.TrainN, c.TaskN, c.Reps, c.TaskMaxLen)
	case c.AdvN < 3:
		return bad("--adv-n %d must be at least 3", c.AdvN)
	case c.Workers < 1:
		return bad("--workers %d must be at least 1", c.Workers)
	case c.Out == "":
		return bad("--out is required")
	}
	return nil
}

// RunRobustEmbedTable trains the rows it lacks, measures the cells it
// lacks and returns the tables (also written to Out/table.md, table.json).
func RunRobustEmbedTable(ctx context.Context, c RobustEmbedTable) (*RobustEmbedReport, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	t := &Table{Dir: c.Out, Log: c.Log, Name: "robustembed-table"}
	for _, row := range c.Rows {
		if err := t.WithRow(row, func() error { return c.row(ctx, t, row) }); err != nil {
			return nil, fmt.Errorf("%s: %w", row, err)
		}
	}
	return c.report(t, true)
}

// modelDir is where a row's encoder is.
func (c *RobustEmbedTable) modelDir(t *Table, row string) string {
	if row == "start" {
		return c.init()
	}
	return t.Path(row, "model")
}

func (c *RobustEmbedTable) row(ctx context.Context, t *Table, row string) error {
	if row != "start" {
		if err := c.trainRow(ctx, t, row); err != nil {
			return err
		}
	}
	dir := c.modelDir(t, row)
	var sts map[string]float64
	if ok, err := t.ReadJSON(row, "sts.json", &sts); err != nil {
		return err
	} else if !ok {
		t.logf("%s: STS", row)
		r, err := pipeline.EvalSTS(ctx, pipeline.EvalSTSConfig{Model: dir, DataDir: c.DataDir, Sets: c.STSSets, Split: "test"})
		if err != nil {
			return err
		}
		sts = map[string]float64{}
		for _, set := range c.STSSets {
			key := set
			if set == "stsb" || set == "sickr" {
				key += "/test"
			}
			res, ok := r.Results[key]
			if !ok {
				return fmt.Errorf("eval-sts gave no %s", key)
			}
			sts[set] = res.Spearman
		}
		if err := t.WriteJSON(row, "sts.json", sts); err != nil {
			return err
		}
	}
	if len(c.TransferTasks) > 0 {
		var tr map[string]float64
		if ok, err := t.ReadJSON(row, "transfer.json", &tr); err != nil {
			return err
		} else if !ok {
			t.logf("%s: transfer tasks", row)
			ec := pipeline.NewEvalTransferConfig()
			ec.Model, ec.DataDir, ec.Tasks, ec.Workers = dir, c.DataDir, c.TransferTasks, c.Workers
			r, err := pipeline.EvalTransfer(ctx, ec)
			if err != nil {
				return err
			}
			tr = map[string]float64{}
			for _, res := range r.Results {
				tr[res.Task] = res.Accuracy
			}
			if err := t.WriteJSON(row, "transfer.json", tr); err != nil {
				return err
			}
		}
	}
	for _, task := range c.Tasks {
		if err := c.taskCells(ctx, t, row, dir, task); err != nil {
			return fmt.Errorf("%s: %w", task, err)
		}
	}
	if len(c.AdvAttacks) == 0 {
		return nil
	}
	m, err := model.Open(dir)
	if err != nil {
		return err
	}
	for _, set := range c.AdvSets {
		pairs, err := loadSimTest(c.DataDir, set)
		if err != nil {
			return err
		}
		pairs = pairs[:min(c.AdvN, len(pairs))]
		for _, a := range c.AdvAttacks {
			name := "advsts-" + a + "-" + set + ".json"
			var cell advCell
			if ok, err := t.ReadJSON(row, name, &cell); err != nil || ok {
				if err == nil && cell.N != len(pairs) {
					err = fmt.Errorf("%s covers %d pairs, this run %d: remove it to recompute", t.Path(row, name), cell.N, len(pairs))
				}
				if err != nil {
					return err
				}
				continue
			}
			t.logf("%s: AdvSTS %s on %d %s pairs", row, a, len(pairs), set)
			rc, _ := attack.LookupRecipe(a)
			cfg, err := pipeline.BuildRecipe(rc, attack.ProtocolPaper, m, pipeline.AttackResources{DataDir: c.DataDir, WordNet: lexicon.DefaultWordNetDir(), MLM: c.MLM, Log: c.Log})
			if err != nil {
				return err
			}
			ac := advsts.DefaultConfig()
			ac.Seed, ac.Workers = c.Seed, c.Workers
			rep, err := advsts.Run(ctx, cfg.Attack, m, pairs, ac)
			if err != nil {
				return err
			}
			cell = advCell{N: rep.N, Skipped: rep.Skipped, Successful: rep.Successful, Failed: rep.Fail, ASR: rep.ASR,
				PearsonClean: rep.PearsonClean, PearsonAttacked: rep.PearsonAttacked}
			if err := t.WriteJSON(row, name, cell); err != nil {
				return err
			}
			if err := t.WriteJSON(row, strings.TrimSuffix(name, ".json")+".pairs.json", rep.Pairs); err != nil {
				return err
			}
		}
	}
	return nil
}

// taskCells fine-tunes the row's classifier for task unless it is there,
// then fills the task's clean and attack cells (spec §7.3, §10.12).
func (c *RobustEmbedTable) taskCells(ctx context.Context, t *Table, row, encoder, task string) error {
	sub := row + "/" + task
	clf := t.Path(sub, "model")
	if !fileExists(t.Path(sub, "trained.json")) {
		tc := pipeline.NewTrainConfig()
		tc.Net.Arch, tc.FineTune.Init, tc.Data.Preset, tc.Data.Dir = "transformer", encoder, task, c.DataDir
		tc.Data.MaxLen = c.TaskMaxLen
		o := &tc.Options
		o.Epochs, o.BatchSize, o.Optimizer, o.LR, o.WeightDecay, o.Clip, o.Schedule, o.Warmup, o.Seed = 3, 32, "adamw", 2e-5, 0.01, 1, "linear", 0.06, 42
		if task == "imdb" {
			tc.Data.MaxLen, o.Epochs = 2*c.TaskMaxLen, 2
		}
		tc.TrainSubset, tc.TrainN, tc.NoTest, tc.Log = c.TrainN > 0, c.TrainN, true, c.Log
		o.Out, o.Resume, o.LogPath = clf, true, t.Path(sub, "train.log.jsonl")
		t.logf("%s: fine-tuning on %s (train-n %d)", row, task, c.TrainN)
		if _, err := pipeline.Train(ctx, tc); err != nil {
			return err
		}
		if err := t.WriteJSON(sub, "trained.json", map[string]any{"encoder": encoder, "train_n": c.TrainN, "max_len": tc.Data.MaxLen, "epochs": o.Epochs}); err != nil {
			return err
		}
	}
	cell := func(name string, f func() (taskCell, error)) error {
		var have taskCell
		if ok, err := t.ReadJSON(sub, name+".json", &have); err != nil || ok {
			return err
		}
		got, err := f()
		if err != nil {
			return err
		}
		t.logf("%s %s %s: %.1f%% (n %d)", row, task, name, got.Accuracy, got.N)
		return t.WriteJSON(sub, name+".json", got)
	}
	for _, a := range c.TaskAttacks {
		if err := cell(a, func() (taskCell, error) {
			var sum taskCell
			for rep := range c.Reps {
				ac := pipeline.NewAttackConfig()
				ac.Model, ac.Data.Preset, ac.Data.Dir, ac.Recipe, ac.N, ac.Shuffle = clf, task, c.DataDir, a, c.TaskN, true
				ac.Seed, ac.Workers, ac.MLM = c.Seed+int64(rep), c.Workers, c.MLM
				ac.CSV = t.Path(sub, fmt.Sprintf("%s-rep%d.csv", a, rep))
				ac.Resume = fileExists(ac.CSV)
				r, err := pipeline.Attack(ctx, ac)
				if err != nil {
					return sum, err
				}
				s := r.Summary
				sum.N += s.N
				sum.Accuracy += 100 * s.AccuracyUnderAttack / float64(c.Reps)
				sum.ASR += 100 * s.AttackSuccessRate / float64(c.Reps)
				sum.Queries += s.AvgQueries / float64(c.Reps)
			}
			sum.Reps = c.Reps
			return sum, nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// scoreTable writes a markdown table of the rows' cell file name (a
// column → score map) over cols, with their average, and returns the
// cells read (rows without the file are left out).
func scoreTable(b *strings.Builder, t *Table, rows []string, name string, cols []string) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	b.WriteString("| row |")
	for _, c := range cols {
		b.WriteString(" " + c + " |")
	}
	b.WriteString(" avg |\n|---|" + strings.Repeat("---|", len(cols)+1) + "\n")
	for _, row := range rows {
		var cells map[string]float64
		if ok, err := t.ReadJSON(row, name, &cells); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		out[row] = cells
		fmt.Fprintf(b, "| %s |", row)
		var sum float64
		for _, c := range cols {
			fmt.Fprintf(b, " %.2f |", cells[c])
			sum += cells[c]
		}
		fmt.Fprintf(b, " %.2f |\n", sum/float64(len(cols)))
	}
	return out, nil
}

// robustEmbedPaperASR is Table 4 of the paper: AdvSTS attack success
// rates (%) of SimCSE and RobustEmbed (BERT-base) per attack and set.
var robustEmbedPaperASR = map[string][2]float64{
	"textfooler/stsb": {21.07, 7.48}, "textfooler/sickr": {24.17, 8.95},
	"textbugger/stsb": {27.49, 11.76}, "textbugger/sickr": {28.34, 13.01},
	"pwws/stsb": {24.15, 13.56}, "pwws/sickr": {26.82, 14.44},
	"bae/stsb": {26.92, 11.13}, "bae/sickr": {28.81, 12.82},
	"bert-attack/stsb": {31.60, 12.99}, "bert-attack/sickr": {32.85, 13.18},
}

// robustEmbedTableName names the block the claims come from.
const robustEmbedTableName = "Table 4 (AdvSTS, scaled)"

// advClaims compares SimCSE's and RobustEmbed's AdvSTS success, pair by
// pair over the pairs both attacked (neither skipped): the claim is
// RobustEmbed's rate below SimCSE's (paper Table 4). The margin is
// SimCSE's rate minus RobustEmbed's, in points, with its paired SE.
func (c *RobustEmbedTable) advClaims(t *Table) ([]Claim, error) {
	var out []Claim
	for _, s := range c.AdvSets {
		for _, a := range c.AdvAttacks {
			name := "advsts-" + a + "-" + s + ".pairs.json"
			var sim, rob []advsts.PairResult
			okS, err := t.ReadJSON("simcse", name, &sim)
			if err != nil {
				return nil, err
			}
			okR, err := t.ReadJSON("robustembed", name, &rob)
			if err != nil {
				return nil, err
			}
			if !okS || !okR || len(sim) != len(rob) {
				continue
			}
			var diffs []float64
			var sumS, sumR float64
			for i := range sim {
				if sim[i].Type == attack.Skipped || rob[i].Type == attack.Skipped {
					continue
				}
				x, y := b2f(sim[i].Type == attack.Successful), b2f(rob[i].Type == attack.Successful)
				diffs = append(diffs, x-y)
				sumS, sumR = sumS+x, sumR+y
			}
			if len(diffs) < 2 {
				continue
			}
			n := float64(len(diffs))
			paper := ""
			if p, ok := robustEmbedPaperASR[a+"/"+s]; ok {
				paper = fmt.Sprintf("SimCSE %.2f, RobustEmbed %.2f", p[0], p[1])
			}
			ours := fmt.Sprintf("SimCSE %.1f, RobustEmbed %.1f over the %d pairs both attacked", 100*sumS/n, 100*sumR/n, len(diffs))
			out = append(out, newClaim(Claim{Paper: "RobustEmbed", Table: robustEmbedTableName},
				fmt.Sprintf("%s %s: success rate (points) RobustEmbed < SimCSE", a, s), paper, ours,
				scaled(metrics.Crossed([][]float64{diffs}), 100), true))
		}
	}
	return out, nil
}

func loadSimTest(dir, set string) ([]dataset.SimPair, error) {
	if set == "sickr" {
		return dataset.LoadSICKR(dir, "test")
	}
	return dataset.LoadSTSB(dir, "test")
}

// trainRow trains a method's row unless its record says it is there;
// a record of other settings is refused.
func (c *RobustEmbedTable) trainRow(ctx context.Context, t *Table, row string) error {
	tc := c.Train
	tc.Method, tc.Init, tc.DataDir, tc.Log = row, c.init(), c.DataDir, c.Log
	tc.Options.Out, tc.Options.Resume = t.Path(row, "model"), true
	want := fmt.Sprintf("%s from %s: sentences %d, max length %d, pool %q, eval every %d (dev %d), tau %g, epochs %d, batch %d, lr %g, seed %d",
		row, filepath.Base(filepath.Clean(tc.Init)), tc.Sentences, tc.MaxLen, tc.Pool, tc.EvalEvery, tc.DevN, tc.Tau, tc.Options.Epochs, tc.Options.BatchSize, tc.Options.LR, tc.Options.Seed)
	if row == "robustembed" {
		r := tc.RobustEmbed
		want += fmt.Sprintf("; ε %g (%s), α %g, β %g, K %d, T %d, λ %g, γ %g, σ %g", r.Eps, r.Norm, r.Alpha, r.Beta, r.K, r.T, r.Lambda, r.Gamma, r.Sigma)
	}
	var rec struct{ Recipe string }
	if ok, err := t.ReadJSON(row, "trained.json", &rec); err != nil {
		return err
	} else if ok {
		if rec.Recipe != want {
			return fmt.Errorf("%s was trained as %q, this run asks for %q: remove %s to retrain", t.Path(row, "trained.json"), rec.Recipe, want, t.RowDir(row))
		}
		return nil
	}
	t.logf("training %s", want)
	if _, err := pipeline.EmbedTrain(ctx, tc); err != nil {
		return err
	}
	rec.Recipe = want
	return t.WriteJSON(row, "trained.json", rec)
}

// report builds the tables from the cells there.
func (c *RobustEmbedTable) report(t *Table, write bool) (*RobustEmbedReport, error) {
	rep := &RobustEmbedReport{Adv: map[string]map[string]advCell{}, Rows: c.Rows}
	var b strings.Builder
	fmt.Fprintf(&b, "# RobustEmbed Tables 1–4 — from %s\n\nTable 1: Spearman ×100 of cosine similarities (test splits).\n\n", filepath.Base(filepath.Clean(c.init())))
	var err error
	if rep.STS, err = scoreTable(&b, t, c.Rows, "sts.json", c.STSSets); err != nil {
		return nil, err
	}
	if len(c.TransferTasks) > 0 {
		b.WriteString("\nTable 2: transfer accuracy ×100 (logistic regression on frozen embeddings, docs/senteval.md).\n\n")
		if rep.Transfer, err = scoreTable(&b, t, c.Rows, "transfer.json", c.TransferTasks); err != nil {
			return nil, err
		}
	}
	if len(c.AdvAttacks) > 0 {
		fmt.Fprintf(&b, "\nTable 4 (AdvSTS, spec §10.13): attack success rate %% and Pearson ×100 before → after, on the first %d test pairs; the first sentence is rewritten.\n\n| row |", c.AdvN)
		for _, s := range c.AdvSets {
			for _, a := range c.AdvAttacks {
				fmt.Fprintf(&b, " %s %s |", a, s)
			}
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(c.AdvSets)*len(c.AdvAttacks)) + "\n")
		for _, row := range c.Rows {
			cells := map[string]advCell{}
			fmt.Fprintf(&b, "| %s |", row)
			for _, s := range c.AdvSets {
				for _, a := range c.AdvAttacks {
					var cell advCell
					if ok, err := t.ReadJSON(row, "advsts-"+a+"-"+s+".json", &cell); err != nil {
						return nil, err
					} else if !ok {
						b.WriteString(" — |")
						continue
					}
					cells[a+"/"+s] = cell
					fmt.Fprintf(&b, " %.1f (%.1f → %.1f) |", cell.ASR, cell.PearsonClean, cell.PearsonAttacked)
				}
			}
			rep.Adv[row] = cells
			b.WriteString("\n")
		}
		if contains(c.Rows, "simcse") && contains(c.Rows, "robustembed") {
			claims, err := c.advClaims(t)
			if err != nil {
				return nil, err
			}
			if len(claims) > 0 {
				b.WriteString("\nRobustEmbed's success rate below SimCSE's (paired over the pairs both attacked; holds or fails beyond two SE, else a tie):\n\n")
				for _, cl := range claims {
					b.WriteString("- " + cl.Line() + "\n")
				}
				rep.Claims = append(rep.Claims, claims...)
			}
		}
	}
	if len(c.Tasks) > 0 && len(c.TaskAttacks) > 0 {
		fmt.Fprintf(&b, "\nTable 3: each row's encoder fine-tuned per task (%d training examples, spec §10.12), attacked on %d seeded test examples × %d repetition(s): attack success rate %% (accuracy under attack %%).\n\n| row |", c.TrainN, c.TaskN, c.Reps)
		for _, task := range c.Tasks {
			for _, a := range c.TaskAttacks {
				fmt.Fprintf(&b, " %s %s |", task, a)
			}
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(c.Tasks)*len(c.TaskAttacks)) + "\n")
		rep.Task = map[string]map[string]taskCell{}
		for _, row := range c.Rows {
			cells := map[string]taskCell{}
			fmt.Fprintf(&b, "| %s |", row)
			for _, task := range c.Tasks {
				for _, a := range c.TaskAttacks {
					var cell taskCell
					if ok, err := t.ReadJSON(row+"/"+task, a+".json", &cell); err != nil {
						return nil, err
					} else if !ok {
						b.WriteString(" — |")
						continue
					}
					cells[task+"/"+a] = cell
					fmt.Fprintf(&b, " %.1f (%.1f) |", cell.ASR, cell.Accuracy)
				}
			}
			rep.Task[row] = cells
			b.WriteString("\n")
		}
	}
	rep.Markdown = b.String()
	if !write {
		return rep, nil
	}
	js := map[string]any{"init": c.init(), "sts": rep.STS, "transfer": rep.Transfer, "advsts": rep.Adv, "claims": rep.Claims, "adv_n": c.AdvN, "tasks": rep.Task, "train_n": c.TrainN, "task_n": c.TaskN,
		"reps": c.Reps, "blas": tensor.BackendDetail()}
	return rep, t.Publish(nil, rep.Markdown, js, false, false)
}
