package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/internal/progress"
)

// showFlags are --show and --color: a before/after word diff of every
// attacked example on stderr.
type showFlags struct {
	on    bool
	color string
}

func (sf *showFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&sf.on, "show", false, "print each attacked example with its substituted words marked, before and after, to stderr")
	fs.StringVar(&sf.color, "color", "auto", "--show colours: auto (when stderr is a terminal), always, never ([[word]] marks without colour)")
}

// install chains the printer onto opt.OnResult (after any earlier hook); a
// pending progress line on w is ended first.
func (sf *showFlags) install(opt *attack.RunOptions, w io.Writer, classes []string) error {
	useColor := false
	switch sf.color {
	case "auto":
		useColor = progress.IsTerminal(w)
	case "always":
		useColor = true
	case "never":
	default:
		return usageError{fmt.Errorf("--color %q: want auto, always or never", sf.color)}
	}
	if !sf.on {
		return nil
	}
	// A status line being redrawn on a terminal needs closing first.
	openLine := opt.Progress != nil && progress.IsTerminal(opt.Progress)
	prev := opt.OnResult
	opt.OnResult = func(r attack.Result) {
		if prev != nil {
			prev(r)
		}
		var b strings.Builder
		if openLine {
			b.WriteByte('\n')
		}
		writeShow(&b, r, classes, useColor)
		io.WriteString(w, b.String())
	}
	return nil
}

const (
	ansiBefore = "\x1b[1;31m" // bold red
	ansiAfter  = "\x1b[1;32m" // bold green
	ansiReset  = "\x1b[0m"
)

func className(classes []string, c int) string {
	if c >= 0 && c < len(classes) {
		return classes[c]
	}
	return fmt.Sprint(c)
}

// writeShow formats one result: a header line, then for a successful attack
// the original and perturbed texts with the changed words marked.
func writeShow(b *strings.Builder, r attack.Result, classes []string, useColor bool) {
	fmt.Fprintf(b, "--- example %d: %s", r.Index, r.Type)
	switch r.Type {
	case attack.Successful:
		fmt.Fprintf(b, " (%s → %s, %d/%d words, %d queries)\n", className(classes, r.OriginalOutput),
			className(classes, r.PerturbedOutput), r.NumPerturbed, r.NumWords, r.NumQueries)
	case attack.Failed:
		fmt.Fprintf(b, " (%s kept, %d queries", className(classes, r.OriginalOutput), r.NumQueries)
		if r.Note != "" {
			fmt.Fprintf(b, "; %s", r.Note)
		}
		b.WriteString(")\n")
	default:
		fmt.Fprintf(b, " (predicted %s, label %s)\n", className(classes, r.OriginalOutput), className(classes, r.GroundTruth))
	}
	if r.Type != attack.Successful {
		return
	}
	before, after := wordDiff(r.OriginalText, r.PerturbedText)
	mark := func(words []string, changed []bool, color string) string {
		out := make([]string, len(words))
		for i, w := range words {
			switch {
			case !changed[i]:
				out[i] = w
			case useColor:
				out[i] = color + w + ansiReset
			default:
				out[i] = "[[" + w + "]]"
			}
		}
		return strings.Join(out, " ")
	}
	fmt.Fprintf(b, "- %s\n+ %s\n", mark(before.words, before.changed, ansiBefore), mark(after.words, after.changed, ansiAfter))
}

type diffSide struct {
	words   []string
	changed []bool
}

// wordDiff splits both texts at white space and marks the words that are
// not part of a longest common subsequence.
func wordDiff(a, b string) (diffSide, diffSide) {
	x, y := strings.Fields(a), strings.Fields(b)
	dx, dy := diffSide{x, make([]bool, len(x))}, diffSide{y, make([]bool, len(y))}
	// Common prefix and suffix first: attacks only substitute words, so
	// the rest is usually small.
	lo := 0
	for lo < len(x) && lo < len(y) && x[lo] == y[lo] {
		lo++
	}
	hx, hy := len(x), len(y)
	for hx > lo && hy > lo && x[hx-1] == y[hy-1] {
		hx--
		hy--
	}
	xs, ys := x[lo:hx], y[lo:hy]
	if len(xs) == len(ys) {
		// Same length: compare position by position (substitutions).
		for i := range xs {
			if xs[i] != ys[i] {
				dx.changed[lo+i], dy.changed[lo+i] = true, true
			}
		}
		return dx, dy
	}
	// LCS table over the middle.
	n, m := len(xs), len(ys)
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if xs[i] == ys[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && xs[i] == ys[j]:
			i++
			j++
		case j == m || (i < n && l[i+1][j] >= l[i][j+1]):
			dx.changed[lo+i] = true
			i++
		default:
			dy.changed[lo+j] = true
			j++
		}
	}
	return dx, dy
}
