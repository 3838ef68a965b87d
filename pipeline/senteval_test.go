package pipeline

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/senteval"
)

func TestEvalTransferAndSTSConfigErrors(t *testing.T) {
	ctx := context.Background()
	tr := func(edit func(*EvalTransferConfig)) error {
		c := NewEvalTransferConfig()
		c.Model, c.DataDir = "m", t.TempDir()
		edit(&c)
		_, err := EvalTransfer(ctx, c)
		return err
	}
	sts := func(edit func(*EvalSTSConfig)) error {
		c := NewEvalSTSConfig()
		c.Model, c.DataDir = "m", t.TempDir()
		edit(&c)
		_, err := EvalSTS(ctx, c)
		return err
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{tr(func(c *EvalTransferConfig) { c.Workers = -1 }), "--workers -1 must be in [0, 256]"},
		{tr(func(c *EvalTransferConfig) { c.Tasks = []string{"mr,sst5"} }), `--tasks: unknown transfer task "sst5"`},
		{tr(func(c *EvalTransferConfig) { c.Tasks = []string{"all,mr"} }), "--tasks names mr twice"},
		{tr(func(c *EvalTransferConfig) { c.Tasks = nil }), "--tasks: no names given"},
		{tr(func(c *EvalTransferConfig) { c.Model = "" }), "--model is required"},
		{tr(func(c *EvalTransferConfig) { c.DataDir = "" }), "eval-transfer needs the benchmark data folder"},
		{sts(func(c *EvalSTSConfig) { c.Split = "valid" }), `--split "valid": want train, dev, test or all`},
		{sts(func(c *EvalSTSConfig) { c.Sets = []string{"stsb, "} }), "an empty name"},
		{sts(func(c *EvalSTSConfig) { c.Sets = []string{"sts12,all"} }), "--sets names sts12 twice"},
	} {
		var ce *ConfigError
		if !errors.As(tc.err, &ce) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v (%T), want a *ConfigError containing %q", tc.err, tc.err, tc.want)
		}
	}
	// Data errors are not configuration errors, and come before the model
	// is opened (it does not exist).
	err := tr(func(c *EvalTransferConfig) { c.Tasks = []string{"mpqa"} })
	var ce *ConfigError
	if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "mpqa.pos") {
		t.Errorf("missing MPQA: %v", err)
	}
}

func TestListNamesExpandsAll(t *testing.T) {
	got, err := listNames("--sets", []string{" stsb ,all"}, []string{"a", "b"})
	if err != nil || strings.Join(got, "|") != "stsb|a|b" {
		t.Errorf("%q, %v", got, err)
	}
}

func TestTransferReportText(t *testing.T) {
	r := &TransferReport{Results: []senteval.TransferResult{
		{Task: "mr", Accuracy: 77.255, Dev: 78, L2: []float64{1e-5, 1e-5, 1e-5, 1e-3, 1e-5}, Folds: 5, Train: 7677, Valid: 853, Test: 2132},
		{Task: "sst2", Accuracy: 80.5, Dev: 81, L2: []float64{1e-4}, Train: 67349, Valid: 872, Test: 1821},
	}, Avg: 78.88, AvgOf: []string{"mr", "sst2"}, Seed: 3}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mr        77.25", "1e-05×4 0.001 ", "5-fold CV of 10662 (fold 1: 7677 / 853 / 2132)",
		"sst2      80.50    81.00  0.0001  ", "67349 / 872 / 1821", "avg       78.88   (mean of mr, sst2)", "seed 3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
