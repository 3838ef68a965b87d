package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/internal/progress"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// parseClass accepts a class name or index of m; "" is -1 (predicted class).
func parseClass(m *model.Model, s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	for i, c := range m.Classes {
		if c == s {
			return i, nil
		}
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(m.Classes) {
		return i, nil
	}
	return 0, usageError{fmt.Errorf("--class %q: the model's classes are %s (or 0..%d)", s, strings.Join(m.Classes, ", "), len(m.Classes)-1)}
}

// colorWord wraps word in a 256-colour ANSI background: green for positive
// scores, red for negative, intensity by |score|/maxAbs.
func colorWord(word string, score, maxAbs float64) string {
	if maxAbs == 0 {
		return word
	}
	r := math.Min(1, math.Abs(score)/maxAbs)
	level := int(math.Round(r * 4)) // 0..4
	greens := []int{255, 194, 157, 120, 46}
	reds := []int{255, 224, 217, 210, 196}
	c := greens[level]
	if score < 0 {
		c = reds[level]
	}
	return fmt.Sprintf("\x1b[48;5;%dm\x1b[30m%s\x1b[0m", c, word)
}

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explain", "explain --model DIR [--method ig|lime] [--class C] [--json] [TEXT...]   (reads one text per line from stdin when no TEXT)", stderr)
	var path, method, class, color string
	var asJSON bool
	var steps, samples int
	var seed int64
	fs.StringVar(&path, "model", "", "model directory (required)")
	fs.StringVar(&method, "method", "ig", "attribution method: ig (integrated gradients) or lime")
	fs.StringVar(&class, "class", "", "class to explain, by name or index (default: the predicted class)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per text: tokens, scores, class, probs")
	fs.StringVar(&color, "color", "auto", "colour words by score: auto (when stdout is a terminal), always, never")
	fs.IntVar(&steps, "steps", explain.DefaultSteps, "ig: interpolation steps")
	fs.IntVar(&samples, "samples", explain.DefaultSamples, "lime: perturbed samples")
	fs.Int64Var(&seed, "seed", 1, "lime: random seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if path == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	if method != "ig" && method != "lime" {
		return usageError{fmt.Errorf("--method %q: want ig or lime", method)}
	}
	if err := checkNumbers(
		numRule{steps >= 1 && steps <= 100000, "steps", steps, "in [1, 100000]"},
		numRule{samples >= 2 && samples <= 1000000, "samples", samples, "in [2, 1000000] (one sample is the input itself)"},
	); err != nil {
		return err
	}
	useColor := false
	switch color {
	case "auto":
		useColor = progress.IsTerminal(stdout)
	case "always":
		useColor = true
	case "never":
	default:
		return usageError{fmt.Errorf("--color %q: want auto, always or never", color)}
	}
	m, err := model.Load(path)
	if err != nil {
		return err
	}
	cls, err := parseClass(m, class)
	if err != nil {
		return err
	}
	texts, err := textsFrom(fs.Args())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, s := range texts {
		words, ids, wordOf := m.Align(s)
		toks := text.Texts(words)
		known := 0
		for _, id := range ids {
			if m.Known(id) {
				known++
			}
		}
		if len(ids) == 0 || known == 0 {
			msg := "no tokens"
			if len(ids) > 0 {
				msg = "every token is unknown to the model's vocabulary"
			}
			if asJSON {
				if err := enc.Encode(map[string]any{"text": s, "error": msg}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(stdout, "%q: nothing to explain (%s)\n", s, msg)
			}
			continue
		}
		probs := explain.Probs(m.Net, ids)
		c := cls
		if c < 0 {
			c = argmax32(probs)
		}
		var scores [][]float64
		if method == "ig" {
			scores, err = explain.IG(m.Net, ids, []int{c}, steps)
		} else {
			scores, err = explain.LIME(m.Net, ids, []int{c}, explain.LIMEOptions{Samples: samples, Seed: seed})
		}
		if err != nil {
			return err
		}
		sc, unknown := explain.WordScores(m, scores[0], ids, wordOf, len(toks))
		if asJSON {
			if err := enc.Encode(map[string]any{"text": s, "tokens": toks, "scores": sc, "method": method,
				"class": c, "label": m.Classes[c], "probs": probs}); err != nil {
				return err
			}
			continue
		}
		var maxAbs float64
		for _, v := range sc {
			maxAbs = math.Max(maxAbs, math.Abs(v))
		}
		fmt.Fprintf(stdout, "%s for class %s (p = %.3f):\n", strings.ToUpper(method), m.Classes[c], probs[c])
		if useColor {
			parts := make([]string, len(toks))
			for j, w := range toks {
				parts[j] = colorWord(w, sc[j], maxAbs)
			}
			fmt.Fprintf(stdout, "  %s\n", strings.Join(parts, " "))
		}
		for j, w := range toks {
			unk := ""
			if unknown[j] {
				unk = " (unknown)"
			}
			fmt.Fprintf(stdout, "  %-20s %+.4f%s\n", w, sc[j], unk)
		}
	}
	return nil
}

// textsFrom returns args, or one text per stdin line when there are none.
// Blank lines are kept (as empty texts) so that output lines stay aligned
// with input lines, but a stdin of blank lines only holds no text.
func textsFrom(args []string) ([]string, error) {
	texts := args
	if len(texts) == 0 {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		nonBlank := false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			nonBlank = nonBlank || line != ""
			texts = append(texts, line)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		if !nonBlank {
			texts = nil
		}
	}
	if len(texts) == 0 {
		return nil, usageError{fmt.Errorf("no text given (as arguments or on stdin)")}
	}
	return texts, nil
}

func argmax32(p []float32) int {
	b := 0
	for i, v := range p {
		if v > p[b] {
			b = i
		}
	}
	return b
}

// printable writes control characters of s (terminal escape sequences,
// stray carriage returns) as \xNN, so that echoing a text can neither
// drive the terminal nor break the one-line-per-text output.
func printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
