package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/internal/cli"
)

// runBenchReproduction implements `bench reproduction`: the reproduction
// report (one line per claim of each paper) from the tables' table.json.
func runBenchReproduction(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench reproduction", "bench reproduction [--out FILE] TABLE_DIR_OR_JSON...", stderr)
	var out string
	var tables cli.List
	fs.StringVar(&out, "out", "", "write the report here, atomically (e.g. docs/reproduction.md); default: print it")
	fs.Var(&tables, "tables", "a table's folder or table.json (repeatable; also as arguments); a folder without one is searched one level down (FTML's ARCH/)")
	if err := parse(fs, args); err != nil {
		return err
	}
	paths := append(tables, fs.Args()...)
	if len(paths) == 0 {
		return usageError{fmt.Errorf("bench reproduction: give at least one table folder or table.json")}
	}
	md, err := experiments.WriteReproduction(out, paths, "textarmor bench reproduction --out "+cmpOr(out, "-")+" "+strings.Join(paths, " "))
	if err != nil {
		return err
	}
	if out == "" {
		_, err = fmt.Fprint(stdout, md)
	}
	return err
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
