// Command textarmor trains, evaluates and queries robust text classifiers.
//
//	textarmor demo                      run the main job on a generated task
//	textarmor data stats --dataset sst2 describe a dataset
//	textarmor train --dataset sst2 --model cnn --out m
//	textarmor eval --model m --dataset sst2
//	textarmor predict --model m "a gripping , well-acted film"
//	textarmor bench                     GEMM peak and model speed table
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/pipeline"
)

// command is one verb of the CLI.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"demo", "train and evaluate on a generated task (no downloads, under a minute)", runDemo},
		{"data", "dataset tools: 'data stats'", runData},
		{"train", "train a classifier on a dataset preset or your own files", runTrain},
		{"embed", "word vectors: 'embed train' (word2vec skip-gram), 'embed stats' (synonym vs random-pair distances), 'embed counterfit' (Mrkšić et al. 2016)", runEmbed},
		{"lm", "language model: 'lm train' (Kneser-Ney n-grams, for the alzantot recipe's --lm)", runLM},
		{"mlm", "masked-LM head of a transformer checkpoint: 'mlm train-head', 'mlm eval' (top-1/top-10 of masked pieces)", runMLM},
		{"eval", "evaluate a model: accuracy, macro-F1, per-class scores, confusion matrix", runEval},
		{"attack", "attack a model with a word-substitution recipe (pwws, textfooler, ga, pso)", runAttack},
		{"explain", "per-word attributions of a prediction (integrated gradients or LIME)", runExplain},
		{"reconstruct", "decode a RAR model's text from k-PGD-attacked representations (its tokens' reconstruction)", runReconstruct},
		{"importance", "list the most and least important words of a FLAT (masked) model", runImportance},
		{"predict", "classify texts given as arguments or one per line on stdin", runPredict},
		{"embed-text", "sentence embeddings of texts from a transformer (a textarmor model or a Hugging Face directory)", runEmbedText},
		{"eval-sts", "score sentence embeddings on STS-B (Spearman ×100 of cosine similarities), SICK-R, STS12–16; alignment and uniformity", runEvalSTS},
		{"eval-transfer", "score sentence embeddings on SentEval's transfer tasks (MR, CR, SUBJ, MPQA, SST-2, MRPC, TREC) by logistic regression", runEvalTransfer},
		{"embed-train", "train a sentence encoder contrastively: SimCSE or RobustEmbed (adversarial views); not word vectors (embed train)", runSentenceTrain},
		{"merge", "join the results files of an attack's shards (attack --shard i/n) into the single run's", runMerge},
		{"export", "write a transformer model as a Hugging Face directory (BertForSequenceClassification)", runExport},
		{"report", "one self-contained HTML page of charts from attack results, bench tables and training logs (docs/report.md)", runReport},
		{"serve", "HTTP JSON API (predict, explain, embed, attack), micro-batched; SIGHUP reloads (docs/serving.md)", runServe},
		{"bench", "measure GEMM peak, training-step and forward speed", runBench},
		{"completion", "print a shell completion script: 'completion bash'", runCompletion},
	}
}

// usageError marks errors caused by how the command was called (exit 2).
type usageError struct{ error }

func main() {
	// TEXTARMOR_CPUPROFILE=FILE writes a Go CPU profile of the run (go tool
	// pprof), for finding where an attack or a training spends its time.
	stop, err := cli.ProfileCPU(os.Getenv("TEXTARMOR_CPUPROFILE"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "textarmor: TEXTARMOR_CPUPROFILE: %v\n", err)
		os.Exit(1)
	}
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			if err == nil || errors.Is(err, flag.ErrHelp) {
				return 0
			}
			fmt.Fprintf(stderr, "textarmor %s: %v\n", c.name, err)
			var ue usageError
			var ce *pipeline.ConfigError
			var fe cli.UsageError
			if errors.As(err, &ue) || errors.As(err, &ce) || errors.As(err, &fe) {
				return 2
			}
			return 1
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	fmt.Fprintf(stderr, "textarmor: unknown command %q (valid: %s)\n", args[0], strings.Join(names, ", "))
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "textarmor: robust text classifiers — train, attack, defend, measure.")
	fmt.Fprintln(w, "\nUsage: textarmor <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'textarmor <command> --help' for the flags of a command and their defaults.")
}

// newFlags, parse and parseNoArgs are the command framework's (internal/cli)
// for textarmor: its help groups and its renamed flags.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlags("textarmor", name, usage, stderr, flagGroups)
}

func parse(fs *flag.FlagSet, args []string) error { return cli.Parse(fs, args, renamedFlags) }

func parseNoArgs(fs *flag.FlagSet, args []string) error {
	return cli.ParseNoArgs(fs, args, renamedFlags)
}
