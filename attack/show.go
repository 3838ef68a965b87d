package attack

import (
	"fmt"
	"strings"
)

// ANSI escapes of Show's colour marks.
const (
	ansiBefore = "\x1b[1;31m" // bold red
	ansiAfter  = "\x1b[1;32m" // bold green
	ansiReset  = "\x1b[0m"
)

// className names class c with classes, or by its number when it has no
// name there.
func className(classes []string, c int) string {
	if c >= 0 && c < len(classes) {
		return classes[c]
	}
	return fmt.Sprint(c)
}

// Show formats r for a reader: a header line, then for a successful attack
// the original and perturbed texts with the substituted words marked, in
// colour (ANSI escapes) or as [[word]]. classes names the labels.
func (r Result) Show(classes []string, color bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- example %d: %s", r.Index, r.Type)
	switch r.Type {
	case Successful:
		fmt.Fprintf(&b, " (%s → %s, %d/%d words, %d queries)\n", className(classes, r.OriginalOutput),
			className(classes, r.PerturbedOutput), r.NumPerturbed, r.NumWords, r.NumQueries)
	case Failed:
		fmt.Fprintf(&b, " (%s kept, %d queries", className(classes, r.OriginalOutput), r.NumQueries)
		if r.Note != "" {
			fmt.Fprintf(&b, "; %s", r.Note)
		}
		b.WriteString(")\n")
	default:
		fmt.Fprintf(&b, " (predicted %s, label %s)\n", className(classes, r.OriginalOutput), className(classes, r.GroundTruth))
	}
	if r.Type != Successful {
		return b.String()
	}
	before, after := WordDiff(r.OriginalText, r.PerturbedText)
	mark := func(side DiffSide, color string) string {
		out := make([]string, len(side.Words))
		for i, w := range side.Words {
			switch {
			case !side.Changed[i]:
				out[i] = w
			case color != "":
				out[i] = color + w + ansiReset
			default:
				out[i] = "[[" + w + "]]"
			}
		}
		return strings.Join(out, " ")
	}
	colorBefore, colorAfter := "", ""
	if color {
		colorBefore, colorAfter = ansiBefore, ansiAfter
	}
	if r.Fixed != "" {
		fmt.Fprintf(&b, "  %s\n", r.Fixed) // a sentence pair's fixed first text
	}
	fmt.Fprintf(&b, "- %s\n+ %s\n", mark(before, colorBefore), mark(after, colorAfter))
	return b.String()
}

// DiffSide is one text of a word diff: its words, and which of them the
// other text does not share.
type DiffSide struct {
	Words   []string
	Changed []bool
}

// WordDiff splits both texts at white space and marks the words that are
// not part of a longest common subsequence.
func WordDiff(a, b string) (DiffSide, DiffSide) {
	x, y := strings.Fields(a), strings.Fields(b)
	dx, dy := DiffSide{x, make([]bool, len(x))}, DiffSide{y, make([]bool, len(y))}
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
				dx.Changed[lo+i], dy.Changed[lo+i] = true, true
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
			dx.Changed[lo+i] = true
			i++
		default:
			dy.Changed[lo+j] = true
			j++
		}
	}
	return dx, dy
}
