package attack

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"

	"github.com/textarmor/textarmor/checkpoint"
)

// ShardExamples is shard i of n of the selected examples: those at
// positions i, i+n, i+2n, … of ex. The partition depends only on the
// selection (not on workers or machines), and each example's result only
// on its index and the seed, so the shards together give exactly the
// single run's results.
func ShardExamples(ex []Example, i, n int) []Example {
	var out []Example
	for k := i; k < len(ex); k += n {
		out = append(out, ex[k])
	}
	return out
}

// ShardKey is the run-record field that names a shard ("i/n").
const ShardKey = "shard"

// MergeShards merges the results files of shards 0 … n−1 of one run
// (paths in shard order) into out: the rows in the order of the single
// run, and the run record without the shard, so that the merged file is
// the single run's (and resumes as one). Every shard must come from the
// same run (the same record apart from the shard) and be finished: shard
// k holds the examples at positions k, k+n, …, so the row counts may only
// step down by one, once, in shard order.
func MergeShards(paths []string, out string) ([]Result, error) {
	n := len(paths)
	if n == 0 {
		return nil, fmt.Errorf("merge: no shard files")
	}
	var id map[string]string
	parts := make([][]Result, n)
	for k, p := range paths {
		raw, err := os.ReadFile(p + ".run.json")
		if err != nil {
			return nil, fmt.Errorf("merge: %s has no run record: %w", p, err)
		}
		var rec map[string]string
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("merge: %s.run.json: %w", p, err)
		}
		if want := fmt.Sprintf("%d/%d", k, n); rec[ShardKey] != want {
			return nil, fmt.Errorf("merge: %s is shard %q; position %d of %d files needs shard %s (give the shards in order)", p, rec[ShardKey], k+1, n, want)
		}
		delete(rec, ShardKey)
		if id == nil {
			id = rec
		} else if !maps.Equal(id, rec) {
			return nil, fmt.Errorf("merge: %s belongs to another run than %s (its record differs beyond the shard)", p, paths[0])
		}
		if parts[k], _, err = ReadCSV(p); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	for k := 1; k < n; k++ {
		if d := len(parts[0]) - len(parts[k]); d < 0 || d > 1 || (k > 1 && len(parts[k]) > len(parts[k-1])) {
			return nil, fmt.Errorf("merge: shard %d has %d rows after shard 0's %d: a shard is unfinished (resume it first)", k, len(parts[k]), len(parts[0]))
		}
	}
	var rs []Result
	for j := 0; j < len(parts[0]); j++ {
		for k := range n {
			if j < len(parts[k]) {
				rs = append(rs, parts[k][j])
			}
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Columns)
	for _, r := range rs {
		w.Write(r.row())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	if err := checkpoint.WriteFileAtomic(out, b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return rs, writeIdentity(out, id)
}
