package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// flagGroup is a titled set of flags in a command's help.
type flagGroup struct {
	title string
	has   func(name string) bool
}

func nameIn(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// flagGroups are the help's groups of command cmd, in order; a flag goes
// to the first group that has it, else to "Other".
func flagGroups(cmd string) []flagGroup {
	data := flagGroup{"Data", nameIn("data", "dataset", "train", "dev", "test", "split", "n", "shuffle", "format", "text-col",
		"label-col", "skip-bad", "tokenizer", "max-len", "min-count", "max-vocab")}
	output := flagGroup{"Output and machine", nameIn("out", "resume", "json", "quiet", "blas", "workers", "color", "show",
		"merge-batches", "no-incremental", "log")}
	if cmd == "attack" {
		return []flagGroup{data, {"Model", nameIn("model")},
			{"Attack", nameIn("recipe", "protocol", "seed", "query-budget", "goal", "transformation", "search", "constraint",
				"no-recipe-constraints")},
			{"Resources", func(n string) bool {
				return slices.Contains([]string{"synonyms", "wordnet", "vectors", "lm"}, n) || strings.HasPrefix(n, "nn-")
			}},
			{"Explain the successes (--explain ig, lime)", func(n string) bool { return strings.HasPrefix(n, "explain") }},
			output}
	}
	g := []flagGroup{data,
		{"Model", nameIn("model", "init", "embed-dim", "filters", "widths", "hidden", "pool", "tanh", "input-layer", "head-hidden",
			"dropout", "embed-init", "embeddings", "embeddings-from", "freeze-embeddings", "freeze-encoder", "retrofit")},
		{"Training", nameIn("epochs", "batch", "lr", "optimizer", "schedule", "warmup", "momentum", "weight-decay", "clip",
			"lr-decay", "lr-decay-epochs", "seed", "patience", "out", "resume", "checkpoint-every", "log")},
		{"Defense", nameIn("defense", "synonyms")},
		{"FTML and CML (--defense ftml, cml)", func(n string) bool {
			return strings.HasPrefix(n, "ftml-") || strings.HasPrefix(n, "cml-")
		}},
	}
	for _, d := range ownFlagDefenses() {
		g = append(g, flagGroup{fmt.Sprintf("%s (--defense %s)", strings.ToUpper(d.Name), d.Name),
			func(n string) bool { return strings.HasPrefix(n, d.FlagPrefix) }})
	}
	return append(g,
		flagGroup{"Attack rounds (--defense flat, adv)", func(n string) bool {
			return n == "rounds" || strings.HasPrefix(n, "round-") || slices.Contains([]string{"wordnet", "vectors", "prob-inputs-to-ce"}, n)
		}},
		flagGroup{"Group mask (FLAT's trivial baseline)", nameIn("group-mask", "group-vectors")},
		output,
	)
}

// groupedHelpMin is the flag count from which help is grouped; shorter
// lists read best as they are.
const groupedHelpMin = 16

// printFlags writes fs's flags as --name, with their help and defaults,
// grouped when there are many.
func printFlags(w io.Writer, cmd string, fs *flag.FlagSet) {
	var all []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != "" { // an old name kept working (renamedFlags)
			all = append(all, f)
		}
	})
	if len(all) < groupedHelpMin {
		fmt.Fprintln(w, "Flags:")
		for _, f := range all {
			printFlag(w, f)
		}
		return
	}
	groups := flagGroups(cmd)
	byGroup := make([][]*flag.Flag, len(groups)+1)
	for _, f := range all {
		k := slices.IndexFunc(groups, func(g flagGroup) bool { return g.has(f.Name) })
		if k < 0 {
			k = len(groups)
		}
		byGroup[k] = append(byGroup[k], f)
	}
	for k, fl := range byGroup {
		if len(fl) == 0 {
			continue
		}
		title := "Other"
		if k < len(groups) {
			title = groups[k].title
		}
		fmt.Fprintf(w, "%s:\n", title)
		sort.Slice(fl, func(a, b int) bool { return fl[a].Name < fl[b].Name })
		for _, f := range fl {
			printFlag(w, f)
		}
		fmt.Fprintln(w)
	}
}

// printFlag writes one flag as flag.PrintDefaults does, spelt --name.
func printFlag(w io.Writer, f *flag.Flag) {
	kind, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if kind != "" {
		line += " " + kind
	}
	usage = strings.ReplaceAll(usage, "\n", "\n    \t")
	if def := f.DefValue; def != "" && def != "false" && def != "0" {
		if kind == "string" {
			usage += fmt.Sprintf(" (default %q)", def)
		} else {
			usage += fmt.Sprintf(" (default %v)", def)
		}
	}
	fmt.Fprintf(w, "%s\n    \t%s\n", line, usage)
}

// completionBash is a bash completion script: commands, then each
// command's flags as its --help lists them.
const completionBash = `# bash completion for textarmor: source it, or put it in
# /etc/bash_completion.d/textarmor (textarmor completion bash > ...).
_textarmor() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    local words=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
    local flags
    flags=$(textarmor "${words[@]}" --help 2>&1 | grep -o -- '^  --[a-z0-9-]*' | tr -d ' ')
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _textarmor textarmor
`

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
	_, err := fmt.Fprintf(stdout, completionBash, strings.Join(names, " "))
	return err
}
