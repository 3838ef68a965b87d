package senteval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/textarmor/textarmor/dataset"
)

// Example is one labelled text of a transfer task, or a labelled pair of
// texts (A, B) for a pair task (MRPC).
type Example struct {
	A, B  string
	Label int
}

// Task is a transfer task's data. A task without an official split holds
// all its examples in All and is scored by k-fold cross-validation; the
// others hold Train and Test, and Valid when the task has an official
// validation split (else a seeded stratified tenth of Train is held out).
type Task struct {
	Name    string
	Classes []string
	// Pair marks a sentence-pair task: an example's feature vector is
	// [u; v; |u−v|; u⊙v] for the embeddings u of A and v of B.
	Pair                    bool
	All, Train, Valid, Test []Example
}

// TaskNames are the transfer tasks LoadTask knows, in report order.
var TaskNames = []string{"mr", "cr", "subj", "mpqa", "sst2", "mrpc", "trec"}

// PaperTasks are the six tasks of the transfer table of SimCSE and
// RobustEmbed (Table 2), the ones Avg averages; TREC is an extra.
var PaperTasks = []string{"mr", "cr", "subj", "mpqa", "sst2", "mrpc"}

// ErrUnknownTask is CheckTaskName's error for a name that is no task.
var ErrUnknownTask = errors.New("unknown transfer task")

// CheckTaskName returns ErrUnknownTask (listing the tasks) for a name
// that is not in TaskNames.
func CheckTaskName(name string) error {
	if !slices.Contains(TaskNames, name) {
		return fmt.Errorf("%w %q (valid: %s)", ErrUnknownTask, name, strings.Join(TaskNames, ", "))
	}
	return nil
}

// LoadTask reads a transfer task from a data folder laid out like the
// project's shared/data:
//
//   - mr, cr, subj, mpqa: all sentences (dataset.LoadCVSet), for k-fold
//     cross-validation;
//   - sst2: the preset sst2 (dataset.Load): train the 67,349 GLUE
//     phrases, validation the 872 GLUE dev sentences, test the 1,821
//     sentences of stsa.binary.test (GLUE's test has no labels);
//   - mrpc: msr_paraphrase_train.txt (4,076 pairs) and
//     msr_paraphrase_test.txt (1,725), untokenised (dataset.LoadMRPC);
//   - trec: the 5,452 questions of TREC.train and the 500 of TREC.test
//     (the preset trec's train and dev splits joined again).
func LoadTask(dataDir, name string) (Task, error) {
	if err := CheckTaskName(name); err != nil {
		return Task{}, err
	}
	single := func(ex []dataset.Example) []Example {
		out := make([]Example, len(ex))
		for i, e := range ex {
			out[i] = Example{A: e.Text, Label: e.Label}
		}
		return out
	}
	switch name {
	case "sst2", "trec":
		ds, err := dataset.Load(name, dataDir)
		if err != nil {
			return Task{}, err
		}
		t := Task{Name: name, Classes: ds.Classes, Train: single(ds.Train), Valid: single(ds.Dev), Test: single(ds.Test)}
		if name == "trec" {
			t.Train, t.Valid = append(t.Train, t.Valid...), nil
		}
		return t, nil
	case "mrpc":
		t := Task{Name: name, Classes: []string{"not paraphrase", "paraphrase"}, Pair: true}
		for _, s := range []struct {
			split string
			dst   *[]Example
		}{{"train", &t.Train}, {"test", &t.Test}} {
			pairs, err := dataset.LoadMRPC(dataDir, s.split)
			if err != nil {
				return Task{}, err
			}
			for _, p := range pairs {
				*s.dst = append(*s.dst, Example{A: p.A, B: p.B, Label: p.Label})
			}
		}
		return t, nil
	}
	ex, classes, err := dataset.LoadCVSet(dataDir, name)
	if err != nil {
		return Task{}, err
	}
	return Task{Name: name, Classes: classes, All: single(ex)}, nil
}

// TransferConfig is the transfer protocol (SentEval's, with one
// validation split per fold instead of an inner cross-validation).
type TransferConfig struct {
	// Folds is k of the k-fold cross-validation of tasks without a split.
	Folds int
	// L2 are the weight decays tried; the one of best validation accuracy
	// is kept (the first on a tie).
	L2 []float64
	// Train is the classifier's training; its L2 and Seed are set by the
	// protocol.
	Train TrainConfig
	// Seed seeds the folds (Seed), the validation hold-out of fold k
	// (Seed+1+k; Seed+1 for a fixed split without a validation set) and
	// every classifier (Seed).
	Seed int64
	// Workers trains this many classifiers at once (0 = GOMAXPROCS). The
	// results do not depend on it.
	Workers int
}

// DefaultTransferConfig returns the protocol of SentEval's standard
// setting as SimCSE and RobustEmbed run it: 10 folds, L2 in {1e-5, 1e-4,
// 1e-3, 1e-2}, SentEval's classifier, seed 1111.
func DefaultTransferConfig() TransferConfig {
	return TransferConfig{Folds: 10, L2: []float64{1e-5, 1e-4, 1e-3, 1e-2}, Train: DefaultTrainConfig(), Seed: 1111}
}

// TransferResult is one task's score.
type TransferResult struct {
	Task string `json:"task"`
	// Accuracy is the test accuracy ×100; for a cross-validated task the
	// mean of the folds' (FoldAccuracy).
	Accuracy     float64   `json:"accuracy"`
	FoldAccuracy []float64 `json:"fold_accuracy,omitempty"`
	// Dev is the validation accuracy ×100 of the chosen L2 (the mean over
	// the folds); L2 the chosen weight decay (one per fold).
	Dev float64   `json:"dev"`
	L2  []float64 `json:"l2"`
	// Folds is k for a cross-validated task, else 0. Train, Valid and Test
	// count the rows of one fit (the first fold's).
	Folds int `json:"folds,omitempty"`
	Train int `json:"train"`
	Valid int `json:"valid"`
	Test  int `json:"test"`
	// Sentences counts the distinct texts embedded (once each).
	Sentences int `json:"sentences"`
	// EmbedSeconds and FitSeconds are wall times.
	EmbedSeconds float64 `json:"embed_seconds"`
	FitSeconds   float64 `json:"fit_seconds"`
}

// Transfer scores an embedder on a task: it embeds every distinct text of
// the task once, makes one feature vector per example (the embedding, or
// [u; v; |u−v|; u⊙v] for a pair), and trains and tests logistic
// regressions as the config says. Cross-validated task: for each of the
// k stratified folds (KFold), the other folds are split into a training
// part and a stratified validation tenth; one classifier per L2 is fitted
// on the training part with early stopping on the validation part; the
// L2 of best validation accuracy is tested on the fold. Fixed split: the
// same with the task's train, validation (or a held-out tenth of train)
// and test sets.
func Transfer(e Embedder, t Task, c TransferConfig) (TransferResult, error) {
	if len(c.L2) == 0 {
		return TransferResult{}, errors.New("senteval: no L2 values to try")
	}
	for _, l2 := range c.L2 {
		tc := c.Train
		tc.L2 = l2
		if err := tc.Check(); err != nil {
			return TransferResult{}, err
		}
	}
	cv := t.All != nil
	var examples []Example
	if cv {
		if c.Folds < 2 {
			return TransferResult{}, fmt.Errorf("senteval: %d folds: need at least 2", c.Folds)
		}
		examples = t.All
	} else {
		if len(t.Train) == 0 || len(t.Test) == 0 {
			return TransferResult{}, fmt.Errorf("senteval %s: no training or test examples", t.Name)
		}
		examples = slices.Concat(t.Train, t.Valid, t.Test)
	}
	y := make([]int, len(examples))
	for i, ex := range examples {
		if ex.Label < 0 || ex.Label >= len(t.Classes) {
			return TransferResult{}, fmt.Errorf("senteval %s: label %d outside the %d classes", t.Name, ex.Label, len(t.Classes))
		}
		y[i] = ex.Label
	}
	r := TransferResult{Task: t.Name}
	start := time.Now()
	f, n, err := features(e, examples, t.Pair)
	if err != nil {
		return TransferResult{}, fmt.Errorf("senteval %s: %w", t.Name, err)
	}
	r.Sentences, r.EmbedSeconds = n, time.Since(start).Seconds()
	start = time.Now()
	// splits[k] = train, valid, test rows of fit k.
	var splits [][3][]int
	if cv {
		folds, err := KFold(y, c.Folds, c.Seed)
		if err != nil {
			return TransferResult{}, fmt.Errorf("senteval %s: %w", t.Name, err)
		}
		for k, test := range folds {
			tr, va, err := holdOut(without(folds, k), y, c.Seed+1+int64(k))
			if err != nil {
				return TransferResult{}, fmt.Errorf("senteval %s: %w", t.Name, err)
			}
			splits = append(splits, [3][]int{tr, va, test})
		}
		r.Folds = c.Folds
	} else {
		tr, va, te := rowRange(0, len(t.Train)), rowRange(len(t.Train), len(t.Valid)), rowRange(len(t.Train)+len(t.Valid), len(t.Test))
		if len(va) == 0 {
			if tr, va, err = holdOut(tr, y, c.Seed+1); err != nil {
				return TransferResult{}, fmt.Errorf("senteval %s: %w", t.Name, err)
			}
		}
		splits = [][3][]int{{tr, va, te}}
	}
	r.Train, r.Valid, r.Test = len(splits[0][0]), len(splits[0][1]), len(splits[0][2])
	nl := len(c.L2)
	models := make([]*LogReg, len(splits)*nl)
	accs := make([]float64, len(splits)*nl)
	err = parallel(len(models), c.Workers, func(j int) error {
		s := splits[j/nl]
		tc := c.Train
		tc.L2, tc.Seed = c.L2[j%nl], c.Seed
		m, acc, err := Fit(f, y, len(t.Classes), s[0], s[1], tc)
		models[j], accs[j] = m, acc
		return err
	})
	if err != nil {
		return TransferResult{}, fmt.Errorf("senteval %s: %w", t.Name, err)
	}
	var test, dev float64
	for k, s := range splits {
		best := k * nl
		for j := k*nl + 1; j < (k+1)*nl; j++ {
			if accs[j] > accs[best] {
				best = j
			}
		}
		acc := 100 * models[best].Accuracy(f, y, s[2])
		test += acc
		dev += 100 * accs[best]
		r.L2 = append(r.L2, c.L2[best-k*nl])
		if cv {
			r.FoldAccuracy = append(r.FoldAccuracy, acc)
		}
	}
	r.Accuracy, r.Dev = test/float64(len(splits)), dev/float64(len(splits))
	r.FitSeconds = time.Since(start).Seconds()
	return r, nil
}

// rowRange is start, start+1, …, start+n−1.
func rowRange(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// features embeds the distinct texts of examples (in one Embed call) and
// returns one row per example, and how many texts were embedded.
func features(e Embedder, examples []Example, pair bool) (Features, int, error) {
	index := map[string]int{}
	var texts []string
	at := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(texts)
			index[s] = i
			texts = append(texts, s)
		}
		return i
	}
	ia, ib := make([]int, len(examples)), make([]int, len(examples))
	for k, ex := range examples {
		ia[k] = at(ex.A)
		if pair {
			ib[k] = at(ex.B)
		}
	}
	vecs, err := embedChecked(e, texts)
	if err != nil {
		return Features{}, 0, err
	}
	d := len(vecs[0])
	dim := d
	if pair {
		dim = 4 * d
	}
	f := Features{X: make([]float64, len(examples)*dim), Dim: dim}
	for k := range examples {
		row := f.Row(k)
		u := vecs[ia[k]]
		if !pair {
			for i, x := range u {
				row[i] = float64(x)
			}
			continue
		}
		v := vecs[ib[k]]
		for i := range d {
			a, b := float64(u[i]), float64(v[i])
			row[i], row[d+i], row[2*d+i], row[3*d+i] = a, b, math.Abs(a-b), a*b
		}
	}
	return f, len(texts), nil
}

// embedChecked embeds texts and checks the vectors: one per text, all of
// one non-zero length, all finite.
func embedChecked(e Embedder, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, errors.New("no texts to embed")
	}
	vecs, err := e.Embed(texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	d := len(vecs[0])
	if d == 0 {
		return nil, errors.New("empty embedding vectors")
	}
	for i, v := range vecs {
		if len(v) != d {
			return nil, fmt.Errorf("vectors of different lengths (%d and %d)", d, len(v))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("the embedding of text %d (%.40q) is not finite", i, texts[i])
			}
		}
	}
	return vecs, nil
}
