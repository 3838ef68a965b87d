// Package cli is textarmor's small command framework: grouped --help spelt
// --name, and a bash completion script that reads it.
package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Group is a titled set of flags in a command's help.
type Group struct {
	Title string
	Has   func(name string) bool
}

// NameIn is a Group's Has for a list of names.
func NameIn(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// groupedHelpMin is the flag count from which help is grouped; shorter
// lists read best as they are.
const groupedHelpMin = 16

// PrintFlags writes fs's flags as --name, with their help and defaults,
// in groups when there are many (a flag goes to the first group that has
// it, else to "Other"). Flags without usage text (old names kept working)
// are left out.
func PrintFlags(w io.Writer, fs *flag.FlagSet, groups []Group) {
	var all []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != "" { // an old name kept working
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
	byGroup := make([][]*flag.Flag, len(groups)+1)
	for _, f := range all {
		k := slices.IndexFunc(groups, func(g Group) bool { return g.Has(f.Name) })
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
			title = groups[k].Title
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
// CompletionBash is the script for a command named cmd.
func CompletionBash(cmd string) string { return strings.ReplaceAll(completionBash, "textarmor", cmd) }

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
