package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/tensor"
)

// runBenchGEMM implements `bench gemm`: every compiled-in BLAS backend on
// the engine's matrix shapes, one and two threads, medians over
// interleaved rounds. Build with -tags openblas for all three backends.
func runBenchGEMM(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench gemm", "bench gemm [--time 200ms] [--rounds 5] [--threads 1,2] [--backends a,b] [--json]", stderr)
	c := experiments.NewGEMMSpeedConfig()
	var asJSON bool
	threads, backends := "1,2", ""
	fs.DurationVar(&c.MinTime, "time", c.MinTime, "minimum time of each measurement (the fastest run counts)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "rounds over all shapes and backends; the median round is reported")
	fs.StringVar(&threads, "threads", threads, "comma-separated thread counts")
	fs.StringVar(&backends, "backends", backends, "comma-separated backends (default: all compiled in: "+strings.Join(tensor.Backends(), ", ")+")")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Threads = nil
	for _, f := range strings.Split(threads, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return usageError{fmt.Errorf("--threads %q: want comma-separated integers", threads)}
		}
		c.Threads = append(c.Threads, t)
	}
	for _, b := range strings.Split(backends, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Backends = append(c.Backends, b)
		}
	}
	r, err := experiments.RunGEMMSpeed(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	return printGEMMSpeed(stdout, r, c)
}

func printGEMMSpeed(w io.Writer, r *experiments.GEMMSpeedReport, c experiments.GEMMSpeedConfig) error {
	fmt.Fprintf(w, "GFLOP/s, median of %d interleaved rounds (each the fastest run over %v); %d cores\n", c.Rounds, c.MinTime, r.Cores)
	names := c.Backends
	if len(names) == 0 {
		names = tensor.Backends()
	}
	for i, d := range r.Backends {
		fmt.Fprintf(w, "  %s: %s\n", names[i], d)
	}
	ratio := tensor.GetBackend("openblas") != nil && tensor.GetBackend("simd") != nil
	for _, t := range c.Threads {
		fmt.Fprintf(w, "\n%d thread(s)\n", t)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		head := "product\tm×n×k (ᵀ: B transposed)"
		for _, n := range names {
			head += "\t" + n
		}
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
			for _, n := range names {
				line += fmt.Sprintf("\t%.1f", r.Cell(s.Name, n, t).GFLOPs)
			}
			if ratio {
				so, ob := r.Cell(s.Name, "simd", t), r.Cell(s.Name, "openblas", t)
				if so != nil && ob != nil {
					line += fmt.Sprintf("\t%.0f %%", 100*so.GFLOPs/ob.GFLOPs)
				}
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
