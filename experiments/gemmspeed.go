package experiments

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/textarmor/textarmor/tensor"
)

// GEMMShape is one matrix product of the engine: C[m,n] = op(A)·op(B)
// with op(A) m×k and op(B) k×n (B transposed where the engine stores it
// [out,in], as the transformer's linear layers and attention scores do).
type GEMMShape struct {
	Name    string `json:"name"`
	M, N, K int
	TransB  bool `json:"trans_b"`
}

// GEMMShapes are `textarmor bench gemm`'s products: the peak's square,
// then the shapes the models run.
var GEMMShapes = []GEMMShape{
	{"sgemm 1024³", 1024, 1024, 1024, false},
	{"Kim CNN convolution (3 widths)", 3200, 1200, 300, false},
	{"BiLSTM time step (H 150)", 64, 600, 150, false},
	{"LSTM time step (H 256)", 64, 1024, 256, false},
	{"LSTM-LM time step", 32, 1024, 256, false},
	{"MiniLM feed-forward in", 2048, 1536, 384, true},
	{"MiniLM feed-forward out", 2048, 384, 1536, true},
	{"attention scores, length 64", 64, 64, 32, true},
	{"attention scores, length 128", 128, 128, 32, true},
	{"MiniLM linear, one sentence of 16", 16, 384, 384, true},
	{"batch-1 linear", 1, 384, 384, true},
	{"batch-1 LSTM step", 1, 1024, 256, false},
}

// GEMMCell is one backend's rate on one shape and thread count: the
// median over rounds of each round's fastest run.
type GEMMCell struct {
	Shape   string    `json:"shape"`
	Backend string    `json:"backend"`
	Threads int       `json:"threads"`
	GFLOPs  float64   `json:"gflop_per_s"`
	Rounds  []float64 `json:"rounds_gflop_per_s"`
}

// GEMMSpeedConfig configures RunGEMMSpeed (`textarmor bench gemm`).
type GEMMSpeedConfig struct {
	// MinTime is the least time of one measurement (at least 3 runs after
	// a warm-up; the fastest counts).
	MinTime time.Duration
	// Rounds repeats every measurement, backends and shapes interleaved,
	// so that a busy spell on a shared machine hits all of them alike; the
	// median round is reported.
	Rounds int
	// Threads lists the thread counts to measure.
	Threads []int
	// Backends to compare ("" or nil: every compiled-in one).
	Backends []string
}

// NewGEMMSpeedConfig returns the CLI's defaults.
func NewGEMMSpeedConfig() GEMMSpeedConfig {
	return GEMMSpeedConfig{MinTime: 200 * time.Millisecond, Rounds: 5, Threads: []int{1, 2}}
}

// GEMMSpeedReport is the table and the machine it was measured on.
type GEMMSpeedReport struct {
	// Names are the backends compared, Backends their tensor.BackendDetail.
	Names    []string `json:"names"`
	Backends []string `json:"backends"`
	// Rounds, MinTime and Threads are the settings measured with.
	Rounds  int           `json:"rounds"`
	MinTime time.Duration `json:"min_time_ns"`
	Threads []int         `json:"threads"`
	Cores   int           `json:"cores"`
	Shapes  []GEMMShape   `json:"shapes"`
	Cells   []GEMMCell    `json:"cells"`
}

// RunGEMMSpeed times every backend on GEMMShapes at each thread count.
// Threads are set for every backend alike: GOMAXPROCS (gonum splits its
// products over it), tensor.SetWorkers and the backend's own pool.
func RunGEMMSpeed(ctx context.Context, c GEMMSpeedConfig) (*GEMMSpeedReport, error) {
	names := c.Backends
	if len(names) == 0 {
		names = tensor.Backends()
	}
	switch {
	case c.MinTime <= 0:
		return nil, configErrorf("--time %v must be a positive duration", c.MinTime)
	case c.Rounds < 1:
		return nil, configErrorf("--rounds %d must be at least 1", c.Rounds)
	case len(c.Threads) == 0:
		return nil, configErrorf("--threads is empty")
	}
	for _, t := range c.Threads {
		if t < 1 || t > 1024 {
			return nil, configErrorf("--threads %d must be in [1, 1024]", t)
		}
	}
	for _, n := range names {
		if tensor.GetBackend(n) == nil {
			return nil, configErrorf("--backends: unknown BLAS backend %q (compiled in: %v; build with -tags openblas for OpenBLAS)", n, tensor.Backends())
		}
	}
	prev := tensor.BackendName()
	defer tensor.UseBackend(prev)
	rep := &GEMMSpeedReport{Names: names, Rounds: c.Rounds, MinTime: c.MinTime, Threads: c.Threads, Cores: runtime.GOMAXPROCS(0), Shapes: GEMMShapes}
	for _, n := range names {
		tensor.UseBackend(n)
		rep.Backends = append(rep.Backends, tensor.BackendDetail())
	}
	r := rand.New(rand.NewSource(1))
	type operands struct{ a, b, c []float32 }
	ops := make([]operands, len(GEMMShapes))
	for i, s := range GEMMShapes {
		ops[i] = operands{randomFloats(r, s.M*s.K), randomFloats(r, s.K*s.N), make([]float32, s.M*s.N)}
	}
	rounds := make(map[[3]int][]float64)
	for range c.Rounds {
		for si, s := range GEMMShapes {
			ldb := s.N
			if s.TransB {
				ldb = s.K
			}
			o := ops[si]
			for ti, t := range c.Threads {
				for bi, n := range names {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					be := tensor.GetBackend(n)
					restore := withThreads(n, t)
					sec := fastestRun(c.MinTime, func() {
						be.Sgemm(false, s.TransB, s.M, s.N, s.K, 1, o.a, s.K, o.b, ldb, 0, o.c, s.N)
					})
					restore()
					key := [3]int{si, ti, bi}
					rounds[key] = append(rounds[key], 2*float64(s.M)*float64(s.N)*float64(s.K)/sec/1e9)
				}
			}
		}
	}
	for si, s := range GEMMShapes {
		for ti, t := range c.Threads {
			for bi, n := range names {
				g := rounds[[3]int{si, ti, bi}]
				rep.Cells = append(rep.Cells, GEMMCell{Shape: s.Name, Backend: n, Threads: t, GFLOPs: median(g), Rounds: g})
			}
		}
	}
	return rep, nil
}

// withThreads makes backend name active on n threads until restore.
func withThreads(name string, n int) (restore func()) {
	prevBackend := tensor.BackendName()
	tensor.UseBackend(name)
	procs, w := runtime.GOMAXPROCS(n), tensor.Workers()
	tensor.SetWorkers(n)
	pool := tensor.SetBLASThreads(n)
	return func() {
		tensor.SetBLASThreads(pool)
		tensor.SetWorkers(w)
		runtime.GOMAXPROCS(procs)
		tensor.UseBackend(prevBackend)
	}
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Cell returns the cell of a shape, backend and thread count, or nil.
func (r *GEMMSpeedReport) Cell(shape, backend string, threads int) *GEMMCell {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Shape == shape && c.Backend == backend && c.Threads == threads {
			return c
		}
	}
	return nil
}

// String names a shape with its sizes for tables.
func (s GEMMShape) String() string {
	t := ""
	if s.TransB {
		t = ", B transposed"
	}
	return fmt.Sprintf("%s (m %d, n %d, k %d%s)", s.Name, s.M, s.N, s.K, t)
}

// WriteTable prints the report as `bench gemm` does: a table per thread
// count, a column per backend, and simd's share of OpenBLAS's rate where
// both were measured.
func (r *GEMMSpeedReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "GFLOP/s, median of %d interleaved rounds (each the fastest run over %v); %d cores\n", r.Rounds, r.MinTime, r.Cores)
	for i, d := range r.Backends {
		fmt.Fprintf(w, "  %s: %s\n", r.Names[i], d)
	}
	ratio := slices.Contains(r.Names, "openblas") && slices.Contains(r.Names, "simd")
	for _, t := range r.Threads {
		fmt.Fprintf(w, "\n%d thread(s)\n", t)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		head := "product\tm×n×k (ᵀ: B transposed)\t" + strings.Join(r.Names, "\t")
		if ratio {
			head += "\tsimd / openblas"
		}
		fmt.Fprintln(tw, head)
		for _, s := range r.Shapes {
			tb := ""
			if s.TransB {
				tb = "ᵀ"
			}
			line := fmt.Sprintf("%s\t%d×%d×%d%s", s.Name, s.M, s.N, s.K, tb)
			for _, n := range r.Names {
				line += fmt.Sprintf("\t%.1f", r.Cell(s.Name, n, t).GFLOPs)
			}
			if ratio {
				line += fmt.Sprintf("\t%.0f %%", 100*r.Cell(s.Name, "simd", t).GFLOPs/r.Cell(s.Name, "openblas", t).GFLOPs)
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
