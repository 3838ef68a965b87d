package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/pipeline"
)

// runMLM implements `mlm train-head` and `mlm eval`: a masked-LM head for
// a transformer checkpoint, the candidate source of BAE and BERT-Attack.
func runMLM(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		args = []string{"train-head", "--help"} // both subcommands' flags, mostly
	} else if len(args) == 0 || args[0] != "train-head" && args[0] != "eval" {
		return usageError{fmt.Errorf("want a subcommand: 'mlm train-head --init DIR --dataset NAME[,NAME...] --out DIR' or 'mlm eval --model DIR --dataset NAME'")}
	}
	eval := args[0] == "eval"
	usage := "mlm train-head --init DIR (--dataset NAME[,NAME...] | --train FILE --test FILE) --out DIR [flags]\n\nTrains BERT's masked-LM head " +
		"(decoder tied to the word embeddings) on the training texts, the encoder fixed (or its top --unfreeze layers too),\nscores it on the test " +
		"texts and writes a Hugging Face BertForMaskedLM directory. A checkpoint's own head is kept unless --retrain."
	if eval {
		usage = "mlm eval --model DIR (--dataset NAME[,NAME...] | --test FILE) [flags]\n\nScores a checkpoint's masked-LM head on the test texts."
	}
	fs := newFlags("mlm "+args[0], usage, stderr)
	c := pipeline.NewMLMHeadConfig()
	df := dataFlags{c.Data}
	df.register(fs, false)
	fs.IntVar(&c.TestN, "test-n", c.TestN, "test texts per dataset, a seeded sample (0 = all)")
	fs.IntVar(&c.MaxLen, "max-len", c.MaxLen, "word pieces read per text, [CLS] and [SEP] included (0 = the checkpoint's)")
	fs.Float64Var(&c.Options.Masking.Rate, "mask-rate", c.Options.Masking.Rate, "share of the word pieces masked")
	fs.Int64Var(&c.Options.Seed, "seed", c.Options.Seed, "seed of the samples, the masks and the head's initial weights")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if eval {
		fs.StringVar(&c.Init, "model", "", "Hugging Face directory with a masked-LM head (required)")
	} else {
		fs.StringVar(&c.Init, "init", "", "Hugging Face BERT-architecture directory (required)")
		fs.StringVar(&c.Out, "out", "", "Hugging Face directory to write (required)")
		fs.BoolVar(&c.Overwrite, "overwrite", false, "replace a non-empty --out")
		fs.BoolVar(&c.Retrain, "retrain", false, "train the head even when the checkpoint has one")
		fs.IntVar(&c.TrainN, "n", c.TrainN, "training texts per dataset, a seeded sample (0 = all)")
		fs.IntVar(&c.Unfreeze, "unfreeze", c.Unfreeze, "top encoder layers that train with the head (0 = the encoder stays fixed)")
		fs.IntVar(&c.Options.Epochs, "epochs", c.Options.Epochs, "passes over the training texts")
		fs.IntVar(&c.Options.Batch, "batch", c.Options.Batch, "texts per step")
		fs.Float64Var(&c.Options.LR, "lr", c.Options.LR, "Adam's peak learning rate (warm-up over a tenth of the steps, then linear decay)")
		fs.Float64Var(&c.Options.Clip, "clip", c.Options.Clip, "global gradient-norm clip (0 = off)")
		fs.BoolVar(&c.Resume, "resume", false, "continue the interrupted run recorded in OUT.ckpt")
		fs.DurationVar(&c.Options.CheckpointEvery, "checkpoint-every", c.Options.CheckpointEvery, "also checkpoint inside an epoch this often (0 = epoch ends only)")
	}
	if err := parseNoArgs(fs, args[1:]); err != nil {
		return err
	}
	c.Data, c.Datasets, c.Log = df.Data, datasetList(df.Preset), stderr
	c.Data.Preset = ""
	r, err := pipeline.TrainMLMHead(context.Background(), c)
	if err != nil {
		return err
	} else if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	return r.WriteText(stdout)
}
