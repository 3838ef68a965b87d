package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "demo [flags]", stderr)
	var seed int64
	var epochs int
	var out string
	var quiet bool
	fs.Int64Var(&seed, "seed", 1, "random seed for the generated task and training")
	fs.IntVar(&epochs, "epochs", 4, "training epochs per model")
	fs.StringVar(&out, "out", "", "keep the trained models under this folder (default: a temporary folder, removed)")
	fs.BoolVar(&quiet, "quiet", false, "no progress bars")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkNumbers(numRule{epochs >= 1, "epochs", epochs, "at least 1"}); err != nil {
		return err
	}
	if out == "" {
		dir, err := os.MkdirTemp("", "textarmor-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = dir
	}
	ds := synth.SentimentRareDataset(3000, 500, 1000, demoRare, seed)
	fmt.Fprintf(stdout, "textarmor demo: a generated sentiment task (%d train / %d dev / %d test sentences; the label is the majority polarity of 1-3 sentiment words among neutral filler).\n"+
		"Each synonym group has one common word; its synonyms are rare (%.0f%% of draws), so a model sees them a few times only.\n\n",
		len(ds.Train), len(ds.Dev), len(ds.Test), 100*demoRare)
	tok := text.NewWhitespace()
	vocab := train.BuildVocab(tok, ds.Train, 1, 0)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tdefense\tparameters\tepochs\ttrain time\tdev acc\ttest acc\ttest macro-F1\tacc under attack\tsuccess rate\t")
	syn := demoSynonyms(vocab)
	for _, arch := range []string{"cnn", "bilstm"} {
		for _, def := range []string{"standard", "ftml"} {
			cfg := nn.DefaultConfig(arch)
			cfg.EmbedDim, cfg.Filters, cfg.Hidden = 64, 32, 32
			m, err := model.New(model.Meta{Net: cfg, Tokenizer: tok.Name(), MaxLen: 50, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(seed)))
			if err != nil {
				return err
			}
			var obj train.Objective = train.Standard{}
			if def == "ftml" {
				// The spec's defaults: k = 8 synonyms, margin 0.7·α0, β = 1,
				// cross-entropy does not move the embedding table.
				f, err := defense.NewFTML(defense.DefaultFTMLConfig(defense.NewSynonymTable(syn, vocab, 8)))
				if err != nil {
					return err
				}
				obj = f
			}
			opt := train.Options{Epochs: epochs, BatchSize: 32, LR: 2e-3, Seed: seed, Out: filepath.Join(out, arch+"-"+def),
				Info: map[string]any{"dataset": ds.Name, "defense": def}}
			if !quiet {
				opt.Progress = stderr
			}
			start := time.Now()
			res, err := train.Run(m, obj, train.Encode(m, ds.Train), train.Encode(m, ds.Dev), opt)
			if err != nil {
				return err
			}
			secs := time.Since(start)
			best, err := model.Load(opt.Out)
			if err != nil {
				return err
			}
			rep, err := evaluate(best, ds.Test, ds.Classes)
			if err != nil {
				return err
			}
			n := 0
			for _, p := range best.Net.Params() {
				n += p.Value.Numel()
			}
			sum, err := demoAttack(best, syn, ds.Test, demoAttackN, seed)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.1f%%\t%.1f%%\t%.3f\t%.1f%%\t%.1f%%\t\n", arch, def, n, len(res.Epochs), secs.Round(10*time.Millisecond),
				100*res.BestDevAcc, 100*rep.Accuracy, rep.MacroF1, 100*sum.AccuracyUnderAttack, 100*sum.AttackSuccessRate)
		}
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nAttack: PWWS (FTML protocol settings: ≤ 25%% words, 21 stop words) on the first %d test sentences, swapping words within the task's synonym groups (e.g. good/fine/decent/nice).\n", demoAttackN)
	fmt.Fprintln(stdout, "\nNext: train on real data with 'textarmor train --dataset sst2 --data ../shared/data --out sst2-cnn'.")
	return nil
}

// demoAttackN is how many test sentences the demo attacks per model.
const demoAttackN = 100

// demoRare is the share of draws that pick a rare synonym.
const demoRare = 0.03

// demoSynonyms is the generated task's synonym groups as a neighbour table.
func demoSynonyms(vocab *text.Vocab) *lexicon.Neighbors {
	lex := synth.DefaultLexicon()
	nb := lexicon.NewNeighbors("synth-groups")
	for _, w := range slices.Sorted(maps.Keys(lex.Synonyms())) {
		nb.Set(w, lex.Synonyms()[w])
	}
	return nb.Restrict(vocab)
}

// demoAttack runs PWWS on the first n test examples.
func demoAttack(m *model.Model, syn *lexicon.Neighbors, test []dataset.Example, n int, seed int64) (attack.Summary, error) {
	rc, err := attack.LookupRecipe("pwws")
	if err != nil {
		return attack.Summary{}, err
	}
	cfg, err := rc.Build(attack.ProtocolFTML, attack.Resources{Synonyms: syn})
	if err != nil {
		return attack.Summary{}, err
	}
	n = min(n, len(test))
	ex := make([]attack.Example, n)
	for i := range ex {
		ex[i] = attack.Example{Index: i, Text: test[i].Text, Label: test[i].Label}
	}
	rs, err := attack.RunAll(context.Background(), cfg.Attack, attack.FromModel(m), ex, attack.RunOptions{Workers: runtime.NumCPU(), Seed: seed})
	if err != nil {
		return attack.Summary{}, err
	}
	return attack.Summarize(rs), nil
}
