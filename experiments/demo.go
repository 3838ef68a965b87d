// Package experiments runs textarmor's end-to-end experiments as library
// calls, so that a Go program gets what a command prints as values: the
// demo (a generated task, standard training against FTML, attacked with
// PWWS).
package experiments

import (
	"context"
	"errors"
	"io"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// DemoOptions configure Demo; the zero value runs the default demo.
type DemoOptions struct {
	Seed     int64     // the generated task, the initial weights and the attacks (default 0)
	Epochs   int       // training epochs per model (0: 4)
	Out      string    // folder to keep the models in ("": a temporary folder, removed)
	AttackN  int       // test sentences attacked per model (0: 100)
	Progress io.Writer // training progress, or nil
}

// DemoTask describes the generated task.
type DemoTask struct {
	Train, Dev, Test int     // sentences per split
	Rare             float64 // share of draws that pick a rare synonym
	AttackN          int     // test sentences attacked per model
}

// DemoRow is one trained model's results.
type DemoRow struct {
	Arch, Defense   string
	Params, Epochs  int
	TrainTime       time.Duration
	DevAcc, TestAcc float64
	TestMacroF1     float64
	UnderAttack     attack.Summary // PWWS under the FTML protocol
	ModelDir        string         // "" when the models were in a temporary folder
	BestEpoch       int
}

// demoRare is the share of draws that pick a rare synonym: each synonym
// group has one common word, and a model sees the others a few times only.
const demoRare = 0.03

// Demo trains a CNN and a BiLSTM with standard training and with FTML on a
// generated sentiment task (3,000 / 500 / 1,000 sentences; the label is
// the majority polarity of 1–3 sentiment words among neutral filler),
// attacks each with PWWS (FTML protocol: ≤ 25 % of the words, 21 stop
// words) over the task's synonym groups, and returns a row per model.
func Demo(opt DemoOptions) (DemoTask, []DemoRow, error) {
	if opt.Epochs == 0 {
		opt.Epochs = 4
	}
	if opt.AttackN == 0 {
		opt.AttackN = 100
	}
	if opt.Epochs < 1 || opt.AttackN < 1 {
		return DemoTask{}, nil, errors.New("experiments: Demo needs Epochs and AttackN ≥ 1")
	}
	out, keep := opt.Out, opt.Out != ""
	if !keep {
		dir, err := os.MkdirTemp("", "textarmor-demo-")
		if err != nil {
			return DemoTask{}, nil, err
		}
		defer os.RemoveAll(dir)
		out = dir
	}
	ds := synth.SentimentRareDataset(3000, 500, 1000, demoRare, opt.Seed)
	task := DemoTask{Train: len(ds.Train), Dev: len(ds.Dev), Test: len(ds.Test), Rare: demoRare, AttackN: min(opt.AttackN, len(ds.Test))}
	tok := text.NewWhitespace()
	vocab := train.BuildVocab(tok, ds.Train, 1, 0)
	syn := demoSynonyms(vocab)
	settings := defense.DefaultSettings()
	synTable := defense.NewSynonymTable(syn, vocab, settings.K)
	gold := make([]int, len(ds.Test))
	for i, e := range ds.Test {
		gold[i] = e.Label
	}
	// Every model reads the same vocabulary, tokenizer and length.
	var trainEnc, devEnc, testEnc []train.Example
	var rows []DemoRow
	for _, arch := range []string{"cnn", "bilstm"} {
		for _, def := range []string{"standard", "ftml"} {
			cfg := nn.DefaultConfig(arch)
			cfg.EmbedDim, cfg.Filters, cfg.Hidden = 64, 32, 32
			m, err := model.New(model.Meta{Net: cfg, Tokenizer: tok.Name(), MaxLen: 50, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(opt.Seed)))
			if err != nil {
				return task, nil, err
			}
			var obj train.Objective = train.Standard{}
			if def == "ftml" {
				// The spec's defaults: k = 8 synonyms, margin 0.7·α0, β = 1,
				// cross-entropy does not move the embedding table.
				if obj, err = defense.NewObjective("ftml", settings, synTable, m.Net.Emb.W.Value); err != nil {
					return task, nil, err
				}
			}
			topt := train.Options{Epochs: opt.Epochs, BatchSize: 32, LR: 2e-3, Seed: opt.Seed, Out: filepath.Join(out, arch+"-"+def),
				Info: map[string]any{"dataset": ds.Name, "defense": def}, Progress: opt.Progress}
			if trainEnc == nil {
				trainEnc, devEnc, testEnc = train.Encode(m, ds.Train), train.Encode(m, ds.Dev), train.Encode(m, ds.Test)
			}
			start := time.Now()
			res, err := train.Run(m, obj, trainEnc, devEnc, topt)
			if err != nil {
				return task, nil, err
			}
			row := DemoRow{Arch: arch, Defense: def, Epochs: len(res.Epochs), TrainTime: time.Since(start), DevAcc: res.BestDevAcc,
				BestEpoch: res.BestEpoch}
			best, err := model.Load(topt.Out)
			if err != nil {
				return task, nil, err
			}
			if keep {
				row.ModelDir = topt.Out
			}
			for _, p := range best.Net.Params() {
				row.Params += p.Value.Numel()
			}
			rep, err := metrics.Classification(gold, train.Predict(best.Net, testEnc), ds.Classes)
			if err != nil {
				return task, nil, err
			}
			row.TestAcc, row.TestMacroF1 = rep.Accuracy, rep.MacroF1
			if row.UnderAttack, err = demoAttack(best, syn, ds.Test[:task.AttackN], opt.Seed); err != nil {
				return task, nil, err
			}
			rows = append(rows, row)
		}
	}
	return task, rows, nil
}

// demoSynonyms is the generated task's synonym groups as a neighbour table.
func demoSynonyms(vocab *text.Vocab) *lexicon.Neighbors {
	lex := synth.DefaultLexicon()
	nb := lexicon.NewNeighbors("synth-groups")
	for _, w := range slices.Sorted(maps.Keys(lex.Synonyms())) {
		nb.Set(w, lex.Synonyms()[w])
	}
	return nb.Restrict(vocab)
}

// demoAttack runs PWWS under the FTML protocol on test.
func demoAttack(m *model.Model, syn *lexicon.Neighbors, test []dataset.Example, seed int64) (attack.Summary, error) {
	rc, err := attack.LookupRecipe("pwws")
	if err != nil {
		return attack.Summary{}, err
	}
	cfg, err := rc.Build(attack.ProtocolFTML, attack.Resources{Synonyms: syn})
	if err != nil {
		return attack.Summary{}, err
	}
	rs, err := attack.RunAll(context.Background(), cfg.Attack, attack.FromModel(m), attack.ExamplesOf(test, nil), attack.RunOptions{Workers: runtime.NumCPU(), Seed: seed})
	if err != nil {
		return attack.Summary{}, err
	}
	return attack.Summarize(rs), nil
}
