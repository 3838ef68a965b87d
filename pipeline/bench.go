package pipeline

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/experiments"
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
	Rows  []experiments.SpeedRow
}

// Bench measures the GEMM peak and the CNN's and BiLSTM's training-step
// and forward speed against it (experiments.SpeedCNNBiLSTM).
func Bench(ctx context.Context, c SpeedConfig) (*SpeedReport, error) {
	if err := firstBadSetting(settingRule{c.MinTime > 0, "time", c.MinTime, "a positive duration"}); err != nil {
		return nil, err
	}
	if err := selectBLASBackend(c.BLAS); err != nil {
		return nil, err
	}
	return speedReport(ctx, experiments.SpeedCNNBiLSTM, c)
}

// BenchTransformer measures the GEMM peak and a MiniLM-shaped encoder's
// forward and fine-tuning speed against it (experiments.SpeedTransformer).
func BenchTransformer(ctx context.Context, c SpeedConfig) (*SpeedReport, error) {
	if err := selectBLASBackend(c.BLAS); err != nil {
		return nil, err
	}
	if c.MinTime <= 0 || c.Len < 2 || c.Len > 512 {
		return nil, configErrorf("--time %v must be positive and --len %d in [2, 512]", c.MinTime, c.Len)
	}
	return speedReport(ctx, experiments.SpeedTransformer, c)
}

func speedReport(ctx context.Context, table func(experiments.SpeedOptions) ([]experiments.SpeedRow, error), c SpeedConfig) (*SpeedReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := table(experiments.SpeedOptions{MinTime: c.MinTime, Len: c.Len})
	if err != nil {
		return nil, err
	}
	return &SpeedReport{BLAS: tensor.BackendDetail(), Cores: runtime.GOMAXPROCS(0), Rows: rows}, nil
}

// BenchDefensesConfig configures BenchDefenses (`textarmor bench defenses`).
type BenchDefensesConfig struct {
	Data Data
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

// NewBenchDefensesConfig returns the CLI's defaults (the network is the
// caller's: nn.DefaultConfig of an architecture).
func NewBenchDefensesConfig() BenchDefensesConfig {
	return BenchDefensesConfig{Data: NewData(), Defenses: []string{"standard", "ftml", "cml", "sem", "ascc", "atfl", "ibp"},
		RepeatStandard: true, N: 2000, Batch: 64, Repeats: 1, LR: 1e-3, Seed: 42}
}

// Check validates the numbers and the defenses.
func (c BenchDefensesConfig) Check() error {
	rules := []settingRule{
		{c.N >= 0, "n", c.N, "≥ 0 (0 = the whole training split)"},
		{c.Batch >= 1, "batch", c.Batch, "at least 1"},
		{isFinite(c.LR) && c.LR > 0, "lr", c.LR, "a positive number"},
		{c.Repeats >= 1, "repeats", c.Repeats, "at least 1"},
	}
	if err := firstBadSetting(rules...); err != nil {
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
func (c BenchDefensesConfig) defenseNames() ([]string, bool, error) {
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

// BenchDefensesReport is the timing table with what it was measured on.
type BenchDefensesReport struct {
	*experiments.DefenseSpeedResult
	Dataset string
	Arch    string
	MaxLen  int
	BLAS    string // the backend, in detail (tensor.BackendDetail)
	Cores   int    // GOMAXPROCS
}

// BenchDefenses times one training epoch of each defense on the same
// seeded training subset, with the same batches, one after another in
// this process (FTML spec §10 "training time per epoch", Table 3, §14 A17).
func BenchDefenses(ctx context.Context, c BenchDefensesConfig) (*BenchDefensesReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if err := selectBLASBackend(c.BLAS); err != nil {
		return nil, err
	}
	names, needSynonyms, _ := c.defenseNames()
	ds, preset, err := c.Data.Load()
	if err != nil {
		return nil, err
	}
	log := orDiscard(c.Log)
	opt := experiments.DefenseSpeedOptions{Data: ds, Preset: preset, Net: c.Net, Defenses: names, RepeatStandard: c.RepeatStandard,
		N: c.N, Batch: c.Batch, LR: c.LR, Seed: c.Seed, Repeats: c.Repeats, Progress: log}
	if needSynonyms {
		if opt.Synonyms, _, err = readNeighborTable(c.Synonyms, c.Data.Dir); err != nil {
			return nil, err
		}
	}
	subset := len(ds.Train) // N 0: all of them
	if c.N > 0 && c.N < subset {
		subset = c.N
	}
	r := &BenchDefensesReport{Dataset: ds.Name, Arch: c.Net.Arch, MaxLen: preset.MaxLen, BLAS: tensor.BackendDetail(), Cores: runtime.GOMAXPROCS(0)}
	fmt.Fprintf(log, "bench defenses: %s, %s, %d of %d training examples (seed %d), batch %d, max length %d; BLAS %s, %d cores\n",
		ds.Name, c.Net.Arch, subset, len(ds.Train), c.Seed, c.Batch, preset.MaxLen, r.BLAS, r.Cores)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.DefenseSpeedResult, err = experiments.DefenseSpeed(opt); err != nil {
		return nil, err
	}
	return r, nil
}
