package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/report"
)

// runReport writes the HTML report of result files and folders.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report RESULTS... --out report.html   (attack results CSVs and JSON summaries, bench table.json, *.log.jsonl training logs, or folders holding them; docs/report.md)", stderr)
	var opt report.Options
	out := fs.String("out", "", "the HTML file to write: one self-contained page (required)")
	examples := fs.Int("examples", report.DefaultExamples, "successful attacks shown per results file (0 = none)")
	fs.StringVar(&opt.Title, "title", "", "the page's title (default \"textarmor report\")")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *out == "":
		return usageError{fmt.Errorf("--out is required: the HTML file to write")}
	case len(paths) == 0:
		return usageError{fmt.Errorf("give the result files or folders to report on")}
	case *examples < 0:
		return usageError{fmt.Errorf("--examples %d: want 0 or more", *examples)}
	}
	opt.Examples = *examples
	if opt.Examples == 0 {
		opt.Examples = -1 // none
	}
	r, err := report.Collect(paths, opt)
	if err != nil {
		return err
	}
	if err := r.WriteFile(*out); err != nil {
		return err
	}
	n, err := r.NumCharts()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: %d charts from %d files (%d attack results, %d training logs); %d files in the folders passed over\n",
		*out, n, len(r.Sources), len(r.Attacks), len(r.Logs), len(r.Skipped))
	return err
}

// parseInterleaved parses flags given before, between or after the
// positional arguments (report DIR --out x.html), which flag.Parse alone
// stops at; after "--" every argument is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
