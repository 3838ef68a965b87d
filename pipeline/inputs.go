package pipeline

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
)

// Helpers the text, model and resource jobs share (eval, predict, explain,
// importance, embeddings, bench).

// orDiscard is w, or io.Discard when w is nil: a job's Log may be unset.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// inputTexts returns texts, or one text per line of r when there are none.
// Blank lines are kept (as empty texts) so that output lines stay aligned
// with input lines, but an input of blank lines only holds no text.
func inputTexts(texts []string, r io.Reader) ([]string, error) {
	if len(texts) == 0 && r != nil {
		sc := bufio.NewScanner(r)
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
		return nil, configErrorf("no text given (as arguments or on stdin)")
	}
	return texts, nil
}

// UseBLAS switches the process-wide matrix backend ("" keeps
// the build's); an unknown name is a configuration error.
func UseBLAS(name string) error {
	if name == "" {
		return nil
	}
	if err := tensor.UseBackend(name); err != nil {
		return &ConfigError{err}
	}
	return nil
}

// openModelOn checks the model directory and the BLAS backend, then opens
// the model: a textarmor model or a Hugging Face directory (model.Open).
func openModelOn(path, blas string) (*model.Model, error) {
	if path == "" {
		return nil, configErrorf("--model is required")
	}
	if err := UseBLAS(blas); err != nil {
		return nil, err
	}
	return model.Open(path)
}

// refuseEncoderOnly refuses a model without a classifier head, saying how
// to get one.
func refuseEncoderOnly(m *model.Model, path string) error {
	if m.EncoderOnly() {
		return configErrorf("%s has no classifier: fine-tune it first (train --init %s)", path, path)
	}
	return nil
}

// ParseNorm reads a distance norm (1, 2 or inf) given by the CLI flag named
// flag (for its error).
func ParseNorm(flag, s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1":
		return 1, nil
	case "2":
		return 2, nil
	case "inf", "infinity", "max":
		return math.Inf(1), nil
	}
	return 0, configErrorf("%s %q: want 1, 2 or inf", flag, s)
}

// isFinite reports whether x is neither NaN nor an infinity.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Rule is one numeric setting's range check: ok is whether val, the
// value of the CLI flag named flag, is in range; want says the range.
type Rule struct {
	OK   bool
	Flag string
	Val  any
	Want string
}

// CheckRules returns a *ConfigError for the first rule that fails,
// worded as the CLI always has: "--flag VALUE must be RANGE".
func CheckRules(rules ...Rule) error {
	for _, r := range rules {
		if !r.OK {
			return configErrorf("--%s %v must be %s", r.Flag, r.Val, r.Want)
		}
	}
	return nil
}
