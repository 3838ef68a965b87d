package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/train"
)

// evalShardFormat marks an eval shard file (and its version).
const evalShardFormat = "textarmor eval shard 1"

// evalShard is the file `eval --shard i/n --out FILE` writes: the
// predictions of the shard's texts and the identity of the run they
// belong to, which MergeEvalShards checks.
type evalShard struct {
	Format string `json:"format"`
	// Run identifies the evaluation: the model's weights digest, the data,
	// the number of texts, the forward block size, and the shard.
	Run map[string]string `json:"run"`
	// ModelPath and Classes are what the single run prints; the path is
	// not part of the identity (shards may see the model at other paths).
	ModelPath string   `json:"model_path"`
	Classes   []string `json:"classes"`
	// Predictions holds [index, gold, predicted] per text of the shard.
	Predictions [][3]int `json:"predictions"`
	// Truncated counts the shard's texts longer than the model's length.
	Truncated int `json:"truncated"`
}

// evalShardBlocks returns the forward blocks shard i of n scores: blocks
// i, i+n, … of the single run's plan (nn.PredictPlan), so every text is
// scored in the very batch the single run scores it in and the merged
// predictions equal the single run's bit for bit.
func evalShardBlocks(seqs [][]int32, i, n int) [][]int {
	plan := nn.PredictPlan(seqs)
	var mine [][]int
	for b := i; b < len(plan); b += n {
		mine = append(mine, plan[b])
	}
	return mine
}

// evaluateShard scores shard si of sn of r.Examples, fills r.Report with
// the shard's own scores and returns the shard file's content.
func evaluateShard(m *model.Model, c EvalConfig, r *EvalReport, classes []string, si, sn int) (*evalShard, error) {
	if err := SameClassCount(m, classes); err != nil {
		return nil, err
	}
	if err := SameInputs(m, r.Examples); err != nil {
		return nil, err
	}
	enc := train.Encode(m, r.Examples)
	seqs := make([][]int32, len(enc))
	for i, e := range enc {
		seqs[i] = e.IDs
	}
	probs := m.Net.PredictOn(seqs, evalShardBlocks(seqs, si, sn))
	digest, err := checkpoint.WeightsDigest(c.Model)
	if err != nil {
		return nil, err
	}
	sh := &evalShard{Format: evalShardFormat, ModelPath: c.Model, Classes: m.Classes,
		Run: map[string]string{"model": digest, "dataset": r.Dataset, "split": r.Split, "file": r.File,
			"examples": fmt.Sprint(len(r.Examples)), "predict_batch": fmt.Sprint(nn.PredictBatch), "shard": fmt.Sprintf("%d/%d", si, sn)}}
	var gold, pred []int
	var mine []dataset.Example
	for i, p := range probs { // in input order: probs is indexed by text
		if p == nil {
			continue
		}
		g, y := r.Examples[i].Label, nn.Argmax(p)
		sh.Predictions = append(sh.Predictions, [3]int{i, g, y})
		gold, pred, mine = append(gold, g), append(pred, y), append(mine, r.Examples[i])
	}
	if r.Report, err = metrics.Classification(gold, pred, m.Classes); err != nil {
		return nil, err
	}
	sh.Truncated = TruncatedCount(m, mine)
	r.Truncated = sh.Truncated
	return sh, nil
}

// writeEvalShard writes a shard file atomically.
func writeEvalShard(path string, sh *evalShard) error {
	raw, err := json.Marshal(sh)
	if err != nil {
		return err
	}
	return checkpoint.WriteFileAtomic(path, append(raw, '\n'), 0o644)
}

// IsEvalShard reports whether path is an eval shard file (as opposed to
// an attack shard's results CSV): `textarmor merge` takes either.
func IsEvalShard(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := f.Read(head)
	return bytes.HasPrefix(bytes.TrimSpace(head[:n]), []byte(`{"format":"`+evalShardFormat+`"`))
}

// MergeEvalShards joins the shard files of one `eval --shard i/n` run
// (in shard order) into out: the JSON object `eval --json` prints for the
// single run, which it equals byte for byte. Every shard must come from
// the same run (the same record apart from the shard) and together they
// must score every text once.
func MergeEvalShards(out string, shards []string) (metrics.Report, error) {
	if out == "" || len(shards) == 0 {
		return metrics.Report{}, configErrorf("merge needs --out FILE and the shards' files, in shard order")
	}
	n := len(shards)
	var first *evalShard
	var examples int
	var gold, pred []int
	seen := []bool{}
	truncated := 0
	for k, p := range shards {
		raw, err := os.ReadFile(p)
		if err != nil {
			return metrics.Report{}, fmt.Errorf("merge: %w", err)
		}
		var sh evalShard
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sh); err != nil {
			return metrics.Report{}, fmt.Errorf("merge: %s: not an eval shard file: %v", p, err)
		}
		if sh.Format != evalShardFormat {
			return metrics.Report{}, fmt.Errorf("merge: %s: format %q, want %q", p, sh.Format, evalShardFormat)
		}
		if want := fmt.Sprintf("%d/%d", k, n); sh.Run["shard"] != want {
			return metrics.Report{}, fmt.Errorf("merge: %s is shard %q; position %d of %d files needs shard %s (give all the shards, in order)", p, sh.Run["shard"], k+1, n, want)
		}
		if first == nil {
			first = &sh
			if _, err := fmt.Sscan(sh.Run["examples"], &examples); err != nil || examples < 0 {
				return metrics.Report{}, fmt.Errorf("merge: %s: bad example count %q", p, sh.Run["examples"])
			}
			gold, pred, seen = make([]int, examples), make([]int, examples), make([]bool, examples)
		} else if !sameRunApartFromShard(first.Run, sh.Run) || !slices.Equal(first.Classes, sh.Classes) {
			return metrics.Report{}, fmt.Errorf("merge: %s belongs to another run than %s (run records %v and %v)", p, shards[0], sh.Run, first.Run)
		}
		for _, row := range sh.Predictions {
			i := row[0]
			if i < 0 || i >= examples || row[1] < 0 || row[1] >= len(sh.Classes) || row[2] < 0 || row[2] >= len(sh.Classes) {
				return metrics.Report{}, fmt.Errorf("merge: %s: prediction %v out of range (%d texts, %d classes)", p, row, examples, len(sh.Classes))
			}
			if seen[i] {
				return metrics.Report{}, fmt.Errorf("merge: %s: text %d is scored twice", p, i)
			}
			seen[i], gold[i], pred[i] = true, row[1], row[2]
		}
		truncated += sh.Truncated
	}
	for i, ok := range seen {
		if !ok {
			return metrics.Report{}, fmt.Errorf("merge: no shard scored text %d: the shards are not all of one %d-shard run", i, n)
		}
	}
	rep, err := metrics.Classification(gold, pred, first.Classes)
	if err != nil {
		return metrics.Report{}, err
	}
	r := &EvalReport{Report: rep, Dataset: first.Run["dataset"], Split: first.Run["split"], File: first.Run["file"], Truncated: truncated}
	obj, err := r.JSON(first.ModelPath, false)
	if err != nil {
		return metrics.Report{}, err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return metrics.Report{}, err
	}
	return rep, checkpoint.WriteFileAtomic(out, append(raw, '\n'), 0o644)
}

func sameRunApartFromShard(a, b map[string]string) bool {
	a, b = maps.Clone(a), maps.Clone(b)
	delete(a, "shard")
	delete(b, "shard")
	return maps.Equal(a, b)
}

// JSON is the object `eval --json` prints: the report's scores with the
// model path, the data and the truncation count (and the certified
// accuracy when certify is set).
func (r *EvalReport) JSON(modelPath string, certify bool) (map[string]any, error) {
	extra := map[string]any{"model": modelPath, "split": r.Split, "truncated": r.Truncated}
	if r.File != "" {
		extra["file"] = r.File
	} else {
		extra["dataset"] = r.Dataset
	}
	if certify {
		extra["certified_accuracy"], extra["certify_hull"] = r.Certified, r.CertifyHull
	}
	return r.Report.JSONWith(extra)
}
