package main

import (
	"fmt"
	"io"

	"github.com/textarmor/textarmor/pipeline"
)

// runMerge joins the results files of an attack's shards.
func runMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", "merge --out FILE SHARD0.csv SHARD1.csv ...   (the shards of one 'attack --shard i/n' run, in shard order)", stderr)
	var out string
	fs.StringVar(&out, "out", "", "the merged results file: the single run's rows and run record (resumable as it)")
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := pipeline.MergeAttackShards(out, fs.Args())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: %d examples from %d shards; accuracy %.2f%% → %.2f%% under attack, success rate %.2f%%\n",
		out, s.N, fs.NArg(), 100*s.OriginalAccuracy, 100*s.AccuracyUnderAttack, 100*s.AttackSuccessRate)
	return err
}
