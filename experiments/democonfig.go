package experiments

import (
	"context"
	"io"

	"github.com/textarmor/textarmor/pipeline"
)

// DemoConfig configures Demo (`textarmor demo`).
type DemoConfig struct {
	Seed   int64  // the generated task, the initial weights and the attacks
	Epochs int    // training epochs per model
	Out    string // folder to keep the models in ("" = a temporary folder, removed)
	// Progress receives the progress bars (nil = none).
	Progress io.Writer
}

// NewDemoConfig returns the CLI's defaults.
func NewDemoConfig() DemoConfig { return DemoConfig{Seed: 1, Epochs: 4} }

// Check validates the epochs (Demo reads 0 as its default).
func (c DemoConfig) Check() error {
	return pipeline.CheckRules(pipeline.Rule{OK: c.Epochs >= 1, Flag: "epochs", Val: c.Epochs, Want: "at least 1"})
}

// DemoReport is the demo's task and its table, a row per model.
type DemoReport struct {
	Task DemoTask
	Rows []DemoRow
}

// RunDemo trains and attacks models on a generated task (Demo) after checking c.
func RunDemo(ctx context.Context, c DemoConfig) (*DemoReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	task, rows, err := Demo(DemoOptions{Seed: c.Seed, Epochs: c.Epochs, Out: c.Out, Progress: c.Progress})
	if err != nil {
		return nil, err
	}
	return &DemoReport{Task: task, Rows: rows}, nil
}
