package main

import (
	"fmt"
	"io"

	"github.com/textarmor/textarmor/pipeline"
)

// runMerge joins the results files of an attack's shards.
func runMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", "merge --out FILE SHARD0 SHARD1 ...   (the shards of one 'attack --shard i/n' or 'eval --shard i/n' run, in shard order)", stderr)
	var out string
	fs.StringVar(&out, "out", "", "the merged file: an attack's rows and run record (resumable as the single run's), or eval's --json result")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 && pipeline.IsEvalShard(fs.Arg(0)) {
		r, err := pipeline.MergeEvalShards(out, fs.Args())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: %d texts from %d shards; accuracy %.4f, macro-F1 %.4f\n", out, r.N, fs.NArg(), r.Accuracy, r.MacroF1)
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
