package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/tensor"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "defenses":
			return runBenchDefenses(args[1:], stdout, stderr)
		case "ftml-table":
			return runBenchFTMLTable(args[1:], stdout, stderr)
		case "flat-table":
			return runBenchFLATTable(args[1:], stdout, stderr)
		case "paired":
			return runBenchPaired(args[1:], stdout, stderr)
		case "reproduction":
			return runBenchReproduction(args[1:], stdout, stderr)
		case "transformer":
			return runBenchTransformer(args[1:], stdout, stderr)
		case "gemm":
			return runBenchGEMM(args[1:], stdout, stderr)
		case "carl-table":
			return runBenchCARLTable(args[1:], stdout, stderr)
		case "spgd-table":
			return runBenchSPGDTable(args[1:], stdout, stderr)
		case "robustembed-table":
			return runBenchRobustEmbedTable(args[1:], stdout, stderr)
		}
		if !strings.HasPrefix(args[0], "-") {
			return usageError{fmt.Errorf("bench %q: valid are defenses, ftml-table, flat-table, spgd-table, carl-table, robustembed-table, paired, reproduction, transformer, gemm, or flags for the GEMM and model speed table", args[0])}
		}
	}
	fs := newFlags("bench", "bench [defenses|ftml-table|flat-table|spgd-table|carl-table|robustembed-table|paired|reproduction|transformer|gemm] [flags]", stderr)
	c := experiments.NewSpeedConfig()
	var asJSON bool
	speedFlags(fs, &c, &asJSON)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	r, err := experiments.RunSpeed(context.Background(), c)
	if err != nil {
		return err
	}
	return printSpeedReport(stdout, r, asJSON)
}

// speedFlags register the flags bench and bench transformer share.
func speedFlags(fs *flag.FlagSet, c *experiments.SpeedConfig, asJSON *bool) {
	fs.StringVar(&c.BLAS, "blas", "", "BLAS backend: "+fmt.Sprint(tensor.Backends())+" (default "+tensor.BackendName()+")")
	fs.BoolVar(asJSON, "json", false, "print the rows as JSON")
	fs.DurationVar(&c.MinTime, "time", c.MinTime, "minimum time spent on each measurement")
}

// printSpeedReport prints a speed table, or its rows as JSON.
func printSpeedReport(stdout io.Writer, r *experiments.SpeedReport, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"blas": r.BLAS, "cores": r.Cores, "rows": r.Rows})
	}
	fmt.Fprintf(stdout, "BLAS %s, %d cores; fastest of repeated runs\n\n", r.BLAS, r.Cores)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\ttime\tGFLOP/s\t% of GEMM peak\tthroughput")
	for _, row := range r.Rows {
		thru := ""
		if row.Through > 0 {
			thru = fmt.Sprintf("%.0f %s", row.Through, row.ThruUnit)
		}
		fmt.Fprintf(tw, "%s\t%.4f s\t%.1f\t%.0f%%\t%s\n", row.Name, row.Seconds, row.GFLOPs, row.PeakPct, thru)
	}
	return tw.Flush()
}
