package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/tensor"
)

// runBenchGEMM implements `bench gemm`: every compiled-in BLAS backend on
// the engine's matrix shapes, one and two threads, medians over
// interleaved rounds. Build with -tags openblas for all three backends.
func runBenchGEMM(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench gemm", "bench gemm [--time 200ms] [--rounds 5] [--threads 1,2] [--backends a,b] [--json]", stderr)
	c := experiments.NewGEMMSpeedConfig()
	var asJSON bool
	var backends string
	threads := cli.Ints(c.Threads)
	fs.DurationVar(&c.MinTime, "time", c.MinTime, "minimum time of each measurement (the fastest run counts)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "rounds over all shapes and backends; the median round is reported")
	fs.Var(&threads, "threads", "comma-separated thread counts")
	fs.StringVar(&backends, "backends", "", "comma-separated backends (default: all compiled in: "+strings.Join(tensor.Backends(), ", ")+")")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Threads, c.Backends = threads, cli.SplitList(backends)
	r, err := experiments.RunGEMMSpeed(context.Background(), c)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	return r.WriteTable(stdout)
}
