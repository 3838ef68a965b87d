package experiments

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/textarmor/textarmor/pipeline"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// SpeedConfig configures Bench and BenchTransformer (`textarmor bench`,
// `textarmor bench transformer`).
type SpeedConfig struct {
	// BLAS names the matrix backend to time ("" = the build's; the choice
	// is process-wide).
	BLAS string
	// MinTime is the least time spent on each measurement.
	MinTime time.Duration
	// Len is BenchTransformer's sequence length in word pieces.
	Len int
}

// NewSpeedConfig returns the CLI's defaults: 3 s a measurement, length 64.
func NewSpeedConfig() SpeedConfig { return SpeedConfig{MinTime: 3 * time.Second, Len: 64} }

// SpeedReport is a speed table and the machine it was measured on.
type SpeedReport struct {
	BLAS  string // the backend, in detail (tensor.BackendDetail)
	Cores int    // GOMAXPROCS
	Rows  []SpeedRow
}

// RunSpeed measures the GEMM peak and the CNN's and BiLSTM's training-step
// and forward speed against it (SpeedCNNBiLSTM).
func RunSpeed(ctx context.Context, c SpeedConfig) (*SpeedReport, error) {
	if err := pipeline.CheckRules(pipeline.Rule{OK: c.MinTime > 0, Flag: "time", Val: c.MinTime, Want: "a positive duration"}); err != nil {
		return nil, err
	}
	if err := pipeline.UseBLAS(c.BLAS); err != nil {
		return nil, err
	}
	return speedReport(ctx, SpeedCNNBiLSTM, c)
}

// RunSpeedTransformer measures the GEMM peak and a MiniLM-shaped encoder's
// forward and fine-tuning speed against it (SpeedTransformer).
func RunSpeedTransformer(ctx context.Context, c SpeedConfig) (*SpeedReport, error) {
	if err := pipeline.UseBLAS(c.BLAS); err != nil {
		return nil, err
	}
	if c.MinTime <= 0 || c.Len < 2 || c.Len > 512 {
		return nil, configErrorf("--time %v must be positive and --len %d in [2, 512]", c.MinTime, c.Len)
	}
	return speedReport(ctx, SpeedTransformer, c)
}

func speedReport(ctx context.Context, table func(SpeedOptions) ([]SpeedRow, error), c SpeedConfig) (*SpeedReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := table(SpeedOptions{MinTime: c.MinTime, Len: c.Len})
	if err != nil {
		return nil, err
	}
	return &SpeedReport{BLAS: tensor.BackendDetail(), Cores: runtime.GOMAXPROCS(0), Rows: rows}, nil
}

// DefenseSpeedConfig configures BenchDefenses (`textarmor bench defenses`).
type DefenseSpeedConfig struct {
	Data pipeline.Data
	// Net is the architecture every defense trains; BLAS the matrix
	// backend ("" = the build's).
	Net  nn.Config
	BLAS string
	// Defenses to time, in order (defense.Lookup names that train in
	// epochs); RepeatStandard times standard training again at the end, to
	// show the run-to-run noise.
	Defenses       []string
	RepeatStandard bool
	// N training examples in the seeded subset (0 = the whole training
	// split); Batch, LR and Seed as in training (Seed also draws the
	// subset); Repeats epochs per defense, a fresh model each, the fastest
	// kept.
	N, Batch, Repeats int
	LR                float64
	Seed              int64
	// Synonyms is the neighbour table of the synonym-based defenses ("" =
	// the default under Data.Dir).
	Synonyms string
	Log      io.Writer // the setup line and a line per defense (nil = discard)
}

// NewDefenseSpeedConfig returns the CLI's defaults (the network is the
// caller's: nn.DefaultConfig of an architecture).
func NewDefenseSpeedConfig() DefenseSpeedConfig {
	return DefenseSpeedConfig{Data: pipeline.NewData(), Defenses: []string{"standard", "ftml", "cml", "sem", "ascc", "atfl", "ibp"},
		RepeatStandard: true, N: 2000, Batch: 64, Repeats: 1, LR: 1e-3, Seed: 42}
}

// Check validates the numbers and the defenses.
func (c DefenseSpeedConfig) Check() error {
	rules := []pipeline.Rule{
		{OK: c.N >= 0, Flag: "n", Val: c.N, Want: "≥ 0 (0 = the whole training split)"},
		{OK: c.Batch >= 1, Flag: "batch", Val: c.Batch, Want: "at least 1"},
		{OK: isFinite(c.LR) && c.LR > 0, Flag: "lr", Val: c.LR, Want: "a positive number"},
		{OK: c.Repeats >= 1, Flag: "repeats", Val: c.Repeats, Want: "at least 1"},
	}
	if err := pipeline.CheckRules(rules...); err != nil {
		return err
	}
	if err := c.Data.Check(); err != nil {
		return err
	}
	_, _, err := c.defenseNames()
	return err
}

// defenseNames are the defenses to time (blank names dropped) and whether
// any of them needs the synonym table.
func (c DefenseSpeedConfig) defenseNames() ([]string, bool, error) {
	var names []string
	needSynonyms := false
	for _, s := range c.Defenses {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		d, err := defense.Lookup(s)
		if err != nil {
			return nil, false, configErrorf("--defenses: %v", err)
		}
		if d.Rounds {
			return nil, false, configErrorf("--defenses: %s trains in attack rounds, not epochs of its own", s)
		}
		needSynonyms = needSynonyms || d.Synonyms
		names = append(names, s)
	}
	if len(names) == 0 {
		return nil, false, configErrorf("--defenses is empty")
	}
	return names, needSynonyms, nil
}

// DefenseSpeedReport is the timing table with what it was measured on.
type DefenseSpeedReport struct {
	*DefenseSpeedResult
	Dataset string
	Arch    string
	MaxLen  int
	BLAS    string // the backend, in detail (tensor.BackendDetail)
	Cores   int    // GOMAXPROCS
}

// RunDefenseSpeed times one training epoch of each defense on the same
// seeded training subset, with the same batches, one after another in
// this process (FTML spec §10 "training time per epoch", Table 3, §14 A17).
func RunDefenseSpeed(ctx context.Context, c DefenseSpeedConfig) (*DefenseSpeedReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if err := pipeline.UseBLAS(c.BLAS); err != nil {
		return nil, err
	}
	names, needSynonyms, _ := c.defenseNames()
	ds, preset, err := c.Data.Load()
	if err != nil {
		return nil, err
	}
	log := orDiscard(c.Log)
	opt := DefenseSpeedOptions{Data: ds, Preset: preset, Net: c.Net, Defenses: names, RepeatStandard: c.RepeatStandard,
		N: c.N, Batch: c.Batch, LR: c.LR, Seed: c.Seed, Repeats: c.Repeats, Progress: log}
	if needSynonyms {
		if opt.Synonyms, _, err = pipeline.LoadNeighbors(c.Synonyms, c.Data.Dir); err != nil {
			return nil, err
		}
	}
	subset := len(ds.Train) // N 0: all of them
	if c.N > 0 && c.N < subset {
		subset = c.N
	}
	r := &DefenseSpeedReport{Dataset: ds.Name, Arch: c.Net.Arch, MaxLen: preset.MaxLen, BLAS: tensor.BackendDetail(), Cores: runtime.GOMAXPROCS(0)}
	fmt.Fprintf(log, "bench defenses: %s, %s, %d of %d training examples (seed %d), batch %d, max length %d; BLAS %s, %d cores\n",
		ds.Name, c.Net.Arch, subset, len(ds.Train), c.Seed, c.Batch, preset.MaxLen, r.BLAS, r.Cores)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.DefenseSpeedResult, err = DefenseSpeed(opt); err != nil {
		return nil, err
	}
	return r, nil
}
