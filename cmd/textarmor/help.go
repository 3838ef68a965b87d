package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/textarmor/textarmor/internal/cli"
)

var nameIn = cli.NameIn

func group(title string, has func(string) bool) cli.Group { return cli.Group{Title: title, Has: has} }

// flagGroups are the help's groups of command cmd, in order; a flag goes
// to the first group that has it, else to "Other".
func flagGroups(cmd string) []cli.Group {
	data := group("Data", nameIn("data", "dataset", "train", "dev", "test", "split", "n", "shuffle", "shard", "format", "text-col",
		"label-col", "skip-bad", "tokenizer", "max-len", "min-count", "max-vocab"))
	output := group("Output and machine", nameIn("out", "resume", "json", "quiet", "blas", "workers", "color", "show",
		"merge-batches", "no-incremental", "log"))
	if cmd == "attack" {
		return []cli.Group{data, group("Model or remote victim", func(n string) bool { return n == "model" || strings.HasPrefix(n, "victim") }),
			group("Attack", nameIn("recipe", "protocol", "seed", "query-budget", "goal", "transformation", "search", "constraint",
				"no-recipe-constraints", "eps", "steps")),
			group("Resources", func(n string) bool {
				return slices.Contains([]string{"synonyms", "wordnet", "vectors", "lm", "mlm", "sentence-encoder"}, n) || strings.HasPrefix(n, "nn-")
			}),
			group("Explain the successes (--explain ig, lime)", func(n string) bool { return strings.HasPrefix(n, "explain") }),
			output}
	}
	g := []cli.Group{data,
		group("Model", nameIn("model", "init", "embed-dim", "filters", "widths", "hidden", "pool", "tanh", "input-layer", "head-hidden",
			"dropout", "embed-dropout", "embed-init", "embeddings", "embeddings-from", "init-lm", "freeze-embeddings", "freeze-encoder", "vocab-supplement", "retrofit")),
		group("Training", nameIn("epochs", "batch", "lr", "optimizer", "schedule", "warmup", "momentum", "weight-decay", "clip", "embed-lr-scale",
			"lr-decay", "lr-decay-epochs", "seed", "train-n", "patience", "out", "resume", "checkpoint-every", "log")),
		group("Defense", nameIn("defense", "synonyms")),
		group("FTML and CML (--defense ftml, cml)", func(n string) bool {
			return strings.HasPrefix(n, "ftml-") || strings.HasPrefix(n, "cml-")
		}),
	}
	for _, d := range ownFlagDefenses() {
		g = append(g, group(fmt.Sprintf("%s (--defense %s)", strings.ToUpper(d.Name), d.Name),
			func(n string) bool { return strings.HasPrefix(n, d.FlagPrefix) }))
	}
	return append(g,
		group("Attack rounds (--defense flat, adv)", func(n string) bool {
			return n == "rounds" || strings.HasPrefix(n, "round-") || slices.Contains([]string{"wordnet", "vectors", "prob-inputs-to-ce"}, n)
		}),
		group("Group mask (FLAT's trivial baseline)", nameIn("group-mask", "group-vectors")),
		output,
	)
}

// runCompletion prints a shell completion script.
func runCompletion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("completion", "completion bash   (prints a bash completion script: source <(textarmor completion bash))", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "bash" {
		return usageError{fmt.Errorf("completion: want the shell: bash")}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	_, err := fmt.Fprintf(stdout, cli.CompletionBash("textarmor"), strings.Join(names, " "))
	return err
}
