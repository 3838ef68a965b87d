package main

import (
	"context"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/sentemb"
)

// runSentenceTrain (embed-train) trains a sentence encoder with SimCSE or RobustEmbed.
func runSentenceTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("embed-train", "embed-train --method simcse|robustembed --init DIR --data DIR --out DIR [flags]", stderr)
	c := pipeline.NewEmbedTrainConfig()
	r, o := &c.RobustEmbed, &c.Options
	var norm, blasName string
	fs.StringVar(&c.Method, "method", c.Method, "simcse (dropout views) or robustembed (plus an adversarial view; seed 002)")
	fs.StringVar(&c.Init, "init", "", "Hugging Face BERT-architecture directory to start from (required)")
	fs.StringVar(&c.DataDir, "data", defaultDataDir(), "data folder: STS-B dev (model selection) and, without --corpus, the offline corpus (IMDB/SST-2/TREC training sentences, WordNet glosses)")
	fs.StringVar(&c.Corpus, "corpus", "", "one training sentence per line (default: the offline corpus)")
	fs.StringVar(&c.WordNet, "wordnet", "", "WordNet dict folder for the offline corpus (default $WORDNET_DIR or Debian's)")
	fs.IntVar(&c.Sentences, "sentences", 0, "train on a seeded sample of this many sentences (0 = all)")
	fs.IntVar(&c.MaxLen, "max-len", c.MaxLen, "word pieces per sentence with [CLS] and [SEP]")
	fs.StringVar(&c.Pool, "pool", "", "sentence vector trained: pooler, cls or mean (default: the checkpoint's sentence pooling, else pooler evaluated as cls)")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "steps between STS-B dev evaluations (the best model is kept)")
	fs.IntVar(&c.DevN, "dev-n", 0, "STS-B dev pairs evaluated (0 = all)")
	fs.Float64Var(&c.Tau, "tau", c.Tau, "temperature τ of the contrastive loss")
	fs.Float64Var(&r.Eps, "robust-eps", r.Eps, "robustembed: radius ε of the perturbation ball")
	fs.StringVar(&norm, "robust-norm", string(r.Norm), "robustembed: the ball's norm, inf, 2 or 1")
	fs.Float64Var(&r.Alpha, "robust-alpha", r.Alpha, "robustembed: PGD step α")
	fs.Float64Var(&r.Beta, "robust-beta", r.Beta, "robustembed: FGSM step β")
	fs.IntVar(&r.K, "robust-k", r.K, "robustembed: PGD steps K")
	fs.IntVar(&r.T, "robust-t", r.T, "robustembed: FGSM steps T")
	fs.Float64Var(&r.Lambda, "robust-lambda", r.Lambda, "robustembed: weight λ of the PGD branch")
	fs.Float64Var(&r.Gamma, "robust-gamma", r.Gamma, "robustembed: weight γ of L_reg")
	fs.IntVar(&o.Epochs, "epochs", o.Epochs, "epochs")
	fs.IntVar(&o.BatchSize, "batch", o.BatchSize, "sentences per batch (the in-batch negatives)")
	fs.Float64Var(&o.LR, "lr", o.LR, "AdamW learning rate, decayed linearly to 0")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "seed of the sample, the batches, dropout and the random starts")
	fs.StringVar(&o.Out, "out", "", "model directory to write (required); its .ckpt resumes")
	fs.BoolVar(&o.Resume, "resume", false, "continue the run from OUT.ckpt")
	fs.StringVar(&blasName, "blas", "", "BLAS backend (default: the build's)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := useBLAS(blasName); err != nil {
		return err
	}
	r.Norm, r.Seed, r.Tau, o.Progress, c.Log = sentemb.Norm(norm), o.Seed, c.Tau, stderr, stderr
	rep, err := pipeline.EmbedTrain(context.Background(), c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: best STS-B dev Spearman %.2f (epoch %d, step %d; %.2f before training) after %s; %d sentences\n",
		rep.Out, rep.Result.BestDevAcc, rep.Result.BestEpoch, rep.Result.BestStep, rep.Start, rep.Elapsed.Round(1e9), rep.Sentences)
	return err
}
