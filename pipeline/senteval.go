package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/senteval"
)

// openEmbedder opens a model as a sentence embedder: a transformer's
// sentence embedding, or with wordMean the mean of any model's word
// vectors (model.WordMean). A CNN or LSTM model without wordMean is a
// configuration error that says so.
func openEmbedder(path, blas string, wordMean bool) (senteval.Embedder, error) {
	m, err := openModelOn(path, blas)
	if err != nil {
		return nil, err
	}
	if wordMean {
		return model.WordMean{M: m}, nil
	}
	if _, ok := m.Net.Enc.(*nn.Transformer); !ok {
		return nil, configErrorf("%s is a %s model: it has no sentence embeddings (give --word-mean to embed with the mean of its word vectors)", path, m.Net.Cfg.Arch)
	}
	return m, nil
}

// EvalSTSConfig configures EvalSTS (`textarmor eval-sts`).
type EvalSTSConfig struct {
	// Model is a model directory (required): a transformer (a textarmor
	// model or a Hugging Face BERT directory), or any model with WordMean.
	// BLAS names the matrix backend.
	Model, BLAS string
	// WordMean embeds a text as the mean of the model's word vectors
	// (model.WordMean) instead of its sentence embedding.
	WordMean bool
	// DataDir is the data folder (required), laid out like shared/data.
	DataDir string
	// Sets to score (senteval.LookupSet: stsb, sickr, sts12 … sts16; "all"
	// = senteval.PaperSets); Split is stsb's and sickr's (train, dev,
	// test, or all three concatenated).
	Sets  []string
	Split string
	// AlignUniform also measures the alignment and uniformity of the
	// embeddings over STS-B's Split (senteval.AlignUniform).
	AlignUniform bool
}

// NewEvalSTSConfig returns the CLI's defaults: STS-B's test split.
func NewEvalSTSConfig() EvalSTSConfig { return EvalSTSConfig{Sets: []string{"stsb"}, Split: "test"} }

// STSReport holds the scores of every set and group scored. An STS year
// is scored in SentEval's "all" setting (senteval.STSAll) under its name
// (sts12), its subsets under sts12/MSRpar and so on, as detail.
type STSReport struct {
	Model   string                        `json:"model"`
	Split   string                        `json:"split"`
	Results map[string]senteval.STSResult `json:"results"`
	// Order lists the names of Results in report order.
	Order []string `json:"-"`
	// Avg is the mean Spearman of the sets in AvgOf: every set asked for,
	// an STS year by its "all" score (the Avg. column of the STS table
	// when the sets are senteval.PaperSets).
	Avg   float64  `json:"avg"`
	AvgOf []string `json:"avg_of"`
	// AlignUniform is set when asked for, over AlignSet (stsb/SPLIT).
	AlignUniform *senteval.AlignUniformResult `json:"align_uniform,omitempty"`
	AlignSet     string                       `json:"align_set,omitempty"`
	Seconds      float64                      `json:"seconds"`
}

// EvalSTS scores a model's sentence embeddings: the Spearman correlation
// (×100) of cosine similarities with the gold scores.
func EvalSTS(ctx context.Context, c EvalSTSConfig) (*STSReport, error) {
	start := time.Now()
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	dir, err := DataDir(c.DataDir, "eval-sts")
	if err != nil {
		return nil, err
	}
	if !slices.Contains([]string{"train", "dev", "test", "all"}, c.Split) {
		return nil, configErrorf("--split %q: want train, dev, test or all", c.Split)
	}
	names, err := listNames("--sets", c.Sets, senteval.PaperSets)
	if err != nil {
		return nil, err
	}
	// The data first: a missing file is reported before the model loads.
	var sets []senteval.Set
	var groupsOf [][]senteval.Group
	for _, name := range names {
		set, err := senteval.LookupSet(name)
		switch {
		case errors.Is(err, senteval.ErrUnknownSet):
			return nil, configErrorf("--sets: %v", err)
		case err != nil:
			return nil, &ConfigError{err}
		}
		groups, err := set.Load(dir, c.Split)
		if err != nil {
			return nil, err
		}
		sets, groupsOf = append(sets, set), append(groupsOf, groups)
	}
	var stsb []senteval.Group
	if c.AlignUniform {
		set, _ := senteval.LookupSet("stsb")
		if stsb, err = set.Load(dir, c.Split); err != nil {
			return nil, err
		}
	}
	e, err := openEmbedder(c.Model, c.BLAS, c.WordMean)
	if err != nil {
		return nil, err
	}
	r := &STSReport{Model: c.Model, Split: c.Split, Results: map[string]senteval.STSResult{}}
	var sum float64
	for k, set := range sets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		groups := groupsOf[k]
		all, each, err := senteval.STSAll(e, groups)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", set.Name, err)
		}
		name := groups[0].Name
		if set.Subsets() {
			for j, g := range groups {
				r.Results[g.Name] = each[j]
				r.Order = append(r.Order, g.Name)
			}
			name = set.Name
		}
		r.Results[name] = all
		r.Order = append(r.Order, name)
		r.AvgOf = append(r.AvgOf, name)
		sum += all.Spearman
	}
	r.Avg = sum / float64(len(sets))
	if c.AlignUniform {
		au, err := senteval.AlignUniform(e, stsb[0].Pairs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", stsb[0].Name, err)
		}
		r.AlignUniform, r.AlignSet = &au, stsb[0].Name
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// WriteText prints one line per set and group (pairs, Spearman and
// Pearson ×100), the average, and the alignment and uniformity.
func (r *STSReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%-28s %6s %9s %9s\n", "set", "pairs", "spearman", "pearson")
	for _, name := range r.Order {
		res := r.Results[name]
		line := fmt.Sprintf("%-28s %6d %9.2f %9.2f", name, res.N, res.Spearman, res.Pearson)
		if res.SubsetMean != 0 {
			line = fmt.Sprintf("%-28s %6d %9.2f %9.2f   ('all': one correlation over the subsets; their mean %.2f)", name+" (all)", res.N, res.Spearman, res.Pearson, res.SubsetMean)
		}
		fmt.Fprintln(w, line)
	}
	if len(r.AvgOf) > 1 {
		fmt.Fprintf(w, "%-28s %6s %9.2f   (mean of %s)\n", "avg", "", r.Avg, strings.Join(r.AvgOf, ", "))
	}
	if a := r.AlignUniform; a != nil {
		fmt.Fprintf(w, "alignment %.4f over the %d %s pairs scored ≥ %g; uniformity %.4f over all pairs of its %d sentences\n",
			a.Align, a.Positives, r.AlignSet, senteval.PositiveScore, a.Uniform, a.Sentences)
	}
	_, err := fmt.Fprintf(w, "(%.1f s)\n", r.Seconds)
	return err
}

// WriteJSON prints the report as one JSON object.
func (r *STSReport) WriteJSON(w io.Writer) error { return json.NewEncoder(w).Encode(r) }

// listNames splits comma-separated names (trimmed; empty entries are
// refused), expands "all" to every name of all, and refuses a name given
// twice; flag names the CLI flag for the errors.
func listNames(flag string, given, all []string) ([]string, error) {
	var out []string
	for _, s := range given {
		for _, n := range strings.Split(s, ",") {
			n = strings.TrimSpace(n)
			add := []string{n}
			switch {
			case n == "":
				return nil, configErrorf("%s %q: an empty name", flag, strings.Join(given, ","))
			case n == "all":
				add = all
			}
			for _, a := range add {
				if slices.Contains(out, a) {
					return nil, configErrorf("%s names %s twice", flag, a)
				}
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, configErrorf("%s: no names given", flag)
	}
	return out, nil
}

// EvalTransferConfig configures EvalTransfer (`textarmor eval-transfer`).
type EvalTransferConfig struct {
	// Model, BLAS and WordMean are as in EvalSTSConfig; DataDir is the
	// data folder (required).
	Model, BLAS, DataDir string
	WordMean             bool
	// Tasks to score (senteval.TaskNames; "all" = every one).
	Tasks []string
	// Seed seeds the folds, the validation hold-outs and the classifiers
	// (senteval.TransferConfig.Seed).
	Seed int64
	// Workers trains this many classifiers at once (0 = GOMAXPROCS); the
	// results do not depend on it.
	Workers int
	// Log, when set, receives one progress line per task.
	Log io.Writer
}

// NewEvalTransferConfig returns the CLI's defaults: every task, SentEval's
// seed 1111.
func NewEvalTransferConfig() EvalTransferConfig {
	return EvalTransferConfig{Tasks: []string{"all"}, Seed: senteval.DefaultTransferConfig().Seed}
}

// TransferReport holds each task's score and their average.
type TransferReport struct {
	Model   string                    `json:"model"`
	Results []senteval.TransferResult `json:"results"`
	// Avg is the mean accuracy of the tasks in AvgOf: those of the
	// transfer table (senteval.PaperTasks) that were scored, so TREC is
	// left out.
	Avg     float64  `json:"avg"`
	AvgOf   []string `json:"avg_of"`
	Seed    int64    `json:"seed"`
	Seconds float64  `json:"seconds"`
}

// EvalTransfer scores a model's sentence embeddings on the transfer tasks
// with SentEval's logistic-regression protocol (senteval.Transfer).
func EvalTransfer(ctx context.Context, c EvalTransferConfig) (*TransferReport, error) {
	start := time.Now()
	if err := CheckRules(Rule{c.Workers >= 0 && c.Workers <= 256, "workers", c.Workers, "in [0, 256] (0 = GOMAXPROCS)"}); err != nil {
		return nil, err
	}
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	dir, err := DataDir(c.DataDir, "eval-transfer")
	if err != nil {
		return nil, err
	}
	names, err := listNames("--tasks", c.Tasks, senteval.TaskNames)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if err := senteval.CheckTaskName(n); err != nil {
			return nil, configErrorf("--tasks: %v", err)
		}
	}
	// The data first: a missing or malformed file is reported before the
	// model loads.
	tasks := make([]senteval.Task, len(names))
	for i, n := range names {
		if tasks[i], err = senteval.LoadTask(dir, n); err != nil {
			return nil, err
		}
	}
	e, err := openEmbedder(c.Model, c.BLAS, c.WordMean)
	if err != nil {
		return nil, err
	}
	tc := senteval.DefaultTransferConfig()
	tc.Seed, tc.Workers = c.Seed, c.Workers
	r := &TransferReport{Model: c.Model, Seed: c.Seed}
	var sum float64
	for _, t := range tasks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.Log != nil {
			fits := len(tc.L2)
			if t.All != nil {
				fits *= tc.Folds
			}
			fmt.Fprintf(c.Log, "%s: embedding %d examples, then %d classifiers…\n", t.Name, len(t.All)+len(t.Train)+len(t.Valid)+len(t.Test), fits)
		}
		res, err := senteval.Transfer(e, t, tc)
		if err != nil {
			return nil, err
		}
		r.Results = append(r.Results, res)
		if slices.Contains(senteval.PaperTasks, t.Name) {
			r.AvgOf = append(r.AvgOf, t.Name)
			sum += res.Accuracy
		}
		if c.Log != nil {
			fmt.Fprintf(c.Log, "%s: %.2f (%d texts embedded in %.1f s, classifiers %.1f s)\n", t.Name, res.Accuracy, res.Sentences, res.EmbedSeconds, res.FitSeconds)
		}
	}
	if len(r.AvgOf) > 0 {
		r.Avg = sum / float64(len(r.AvgOf))
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// WriteText prints one line per task (test accuracy, validation accuracy,
// the chosen L2 with how many folds chose it, the sizes) and the average.
func (r *TransferReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%-6s %8s %8s  %-34s %s\n", "task", "accuracy", "dev", "l2 chosen (×folds)", "train / valid / test")
	for _, res := range r.Results {
		sizes := fmt.Sprintf("%d / %d / %d", res.Train, res.Valid, res.Test)
		if res.Folds > 0 {
			sizes = fmt.Sprintf("%d-fold CV of %d (fold 1: %s)", res.Folds, res.Train+res.Valid+res.Test, sizes)
		}
		fmt.Fprintf(w, "%-6s %8.2f %8.2f  %-34s %s\n", res.Task, res.Accuracy, res.Dev, countL2(res.L2), sizes)
	}
	if len(r.AvgOf) > 0 {
		fmt.Fprintf(w, "%-6s %8.2f   (mean of %s)\n", "avg", r.Avg, strings.Join(r.AvgOf, ", "))
	}
	_, err := fmt.Fprintf(w, "(seed %d, %.1f s)\n", r.Seed, r.Seconds)
	return err
}

// countL2 lists the distinct L2 values in increasing order, each with how
// many times it was chosen when more than once: "1e-05×7 0.001×3".
func countL2(vals []float64) string {
	n := map[float64]int{}
	for _, v := range vals {
		n[v]++
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(n)) {
		if n[v] > 1 {
			parts = append(parts, fmt.Sprintf("%g×%d", v, n[v]))
		} else {
			parts = append(parts, fmt.Sprintf("%g", v))
		}
	}
	return strings.Join(parts, " ")
}

// WriteJSON prints the report as one JSON object.
func (r *TransferReport) WriteJSON(w io.Writer) error { return json.NewEncoder(w).Encode(r) }
