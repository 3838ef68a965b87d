package senteval

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/realdata"
)

// tableEmbedder returns the vector stored for each text; an unknown text
// is an error. It records every call's texts.
type tableEmbedder struct {
	vecs  map[string][]float32
	calls [][]string
}

func (e *tableEmbedder) Embed(texts []string) ([][]float32, error) {
	e.calls = append(e.calls, texts)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v, ok := e.vecs[s]
		if !ok {
			return nil, fmt.Errorf("no vector for %q", s)
		}
		out[i] = v
	}
	return out, nil
}

// blobTask turns generated features into a task whose texts are "t<i>"
// and an embedder that maps them back.
func blobTask(f Features, y []int) ([]Example, *tableEmbedder) {
	e := &tableEmbedder{vecs: map[string][]float32{}}
	ex := make([]Example, len(y))
	for i := range y {
		s := fmt.Sprintf("t%d", i)
		v := make([]float32, f.Dim)
		for j, x := range f.Row(i) {
			v[j] = float32(x)
		}
		e.vecs[s] = v
		ex[i] = Example{A: s, Label: y[i]}
	}
	return ex, e
}

func TestTransferCrossValidation(t *testing.T) {
	f, y := blobs(600, 5, 2, 3, false, 11)
	ex, e := blobTask(f, y)
	ex = append(ex, ex[0], ex[1]) // repeated texts are embedded once
	task := Task{Name: "gen", Classes: []string{"a", "b"}, All: ex}
	c := DefaultTransferConfig()
	c.Workers = 1
	r, err := Transfer(e, task, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.calls) != 1 || len(e.calls[0]) != 600 || r.Sentences != 600 {
		t.Errorf("%d Embed calls, %d texts: want one call with the 600 distinct texts", len(e.calls), r.Sentences)
	}
	if r.Folds != 10 || len(r.FoldAccuracy) != 10 || len(r.L2) != 10 || r.Accuracy < 95 || r.Dev < 95 {
		t.Errorf("result %+v: want 10 folds and ~99 %% on blobs 3σ apart", r)
	}
	var mean float64
	for _, a := range r.FoldAccuracy {
		mean += a / 10
	}
	if math.Abs(mean-r.Accuracy) > 1e-9 || r.Train+r.Valid+r.Test != 602 || r.Valid < 54 || r.Valid > 55 {
		t.Errorf("accuracy %.4f vs fold mean %.4f; sizes %d / %d / %d", r.Accuracy, mean, r.Train, r.Valid, r.Test)
	}
	// The results do not depend on the number of workers.
	c.Workers = 3
	r3, err := Transfer(e, task, c)
	if err != nil {
		t.Fatal(err)
	}
	r.EmbedSeconds, r.FitSeconds, r3.EmbedSeconds, r3.FitSeconds = 0, 0, 0, 0
	if !reflect.DeepEqual(r, r3) {
		t.Errorf("1 worker %+v\n3 workers %+v", r, r3)
	}
}

// TestTransferPicksTheL2TheValidationFavours: training rows at x = 5
// (class 1), x = −5 and x = 1 (class 0). Without weight decay the
// classifier fits them all, so it puts x = 1 in class 0; with a large one
// its weights shrink towards a centroid rule (w ∝ Σ (y − ½) x, b ∝ Σ (y −
// ½)), which puts x = 1 in class 1. A validation set of x = 1 rows
// labelled 0 must pick L2 0; labelled 1, L2 1000 — and the test accuracy
// is then that model's.
func TestTransferPicksTheL2TheValidationFavours(t *testing.T) {
	e := &tableEmbedder{vecs: map[string][]float32{}}
	add := func(dst *[]Example, kind string, n int, x float32, label int) {
		for i := range n {
			s := fmt.Sprintf("%s%d", kind, i)
			e.vecs[s] = []float32{x + float32(i%7)*0.01}
			*dst = append(*dst, Example{A: s, Label: label})
		}
	}
	var train, light, heavy, test []Example
	add(&train, "pos", 600, 5, 1)
	add(&train, "neg", 600, -5, 0)
	add(&train, "mid", 800, 1, 0)
	add(&light, "vmid0-", 50, 1, 0)
	add(&heavy, "vmid1-", 50, 1, 1)
	add(&test, "tpos", 10, 5, 1)
	add(&test, "tneg", 10, -5, 0)
	add(&test, "tmid", 20, 1, 0)
	c := DefaultTransferConfig()
	c.L2, c.Train.LR = []float64{0, 1000}, 0.03
	for _, tc := range []struct {
		valid []Example
		l2    float64
		test  float64
	}{{light, 0, 100}, {heavy, 1000, 50}} {
		for _, seed := range []int64{1, 2, 1111} {
			c.Seed = seed
			task := Task{Name: "l2", Classes: []string{"neg", "pos"}, Train: train, Valid: tc.valid, Test: test}
			r, err := Transfer(e, task, c)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.L2) != 1 || r.L2[0] != tc.l2 || r.Accuracy != tc.test || r.Dev != 100 {
				t.Errorf("seed %d, validation %s…: chose L2 %v (dev %.1f), test %.1f; want L2 %g, test %.0f", seed, tc.valid[0].A, r.L2, r.Dev, r.Accuracy, tc.l2, tc.test)
			}
		}
	}
}

func TestTransferPairFeatures(t *testing.T) {
	e := &tableEmbedder{vecs: map[string][]float32{"a": {1, -2}, "b": {3, 4}}}
	f, n, err := features(e, []Example{{A: "a", B: "b"}, {A: "b", B: "b"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, -2, 3, 4, 2, 6, 3, -8, 3, 4, 3, 4, 0, 0, 9, 16}
	if n != 2 || f.Dim != 8 || !reflect.DeepEqual(f.X, want) {
		t.Errorf("features %v (dim %d, %d texts), want [u; v; |u−v|; u⊙v] = %v", f.X, f.Dim, n, want)
	}
}

// badEmbedder returns what it is told to: too few vectors, ragged ones,
// NaN.
type badEmbedder struct{ kind string }

func (b badEmbedder) Embed(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 2}
	}
	switch b.kind {
	case "short":
		return out[1:], nil
	case "ragged":
		out[1] = []float32{1}
	case "nan":
		out[1] = []float32{float32(math.NaN()), 0}
	case "error":
		return nil, errors.New("no sentence embeddings")
	}
	return out, nil
}

func TestTransferRefusesBadEmbeddings(t *testing.T) {
	task := Task{Name: "x", Classes: []string{"a", "b"}, Train: []Example{{A: "p"}, {A: "q", Label: 1}}, Test: []Example{{A: "r"}}}
	for _, kind := range []string{"short", "ragged", "nan", "error"} {
		if _, err := Transfer(badEmbedder{kind}, task, DefaultTransferConfig()); err == nil {
			t.Errorf("%s embeddings accepted", kind)
		}
	}
	bad := task
	bad.Test = []Example{{A: "r", Label: 2}}
	if _, err := Transfer(badEmbedder{}, bad, DefaultTransferConfig()); err == nil || !strings.Contains(err.Error(), "label 2") {
		t.Errorf("label outside the classes: %v", err)
	}
}

// TestLoadTaskReal: the tasks' sizes on the shared data.
func TestLoadTaskReal(t *testing.T) {
	dir := realdata.Dir(t)
	for _, c := range []struct {
		name                    string
		all, train, valid, test int
	}{
		{"mr", 10662, 0, 0, 0}, {"cr", 3771, 0, 0, 0}, {"subj", 10000, 0, 0, 0}, {"mpqa", 10603, 0, 0, 0},
		{"sst2", 0, 67349, 872, 1821}, {"mrpc", 0, 4076, 0, 1725}, {"trec", 0, 5452, 0, 500},
	} {
		task, err := LoadTask(dir, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(task.All) != c.all || len(task.Train) != c.train || len(task.Valid) != c.valid || len(task.Test) != c.test {
			t.Errorf("%s: %d / %d / %d / %d, want %+v", c.name, len(task.All), len(task.Train), len(task.Valid), len(task.Test), c)
		}
		if task.Pair != (c.name == "mrpc") {
			t.Errorf("%s: pair %v", c.name, task.Pair)
		}
	}
	if _, err := LoadTask(dir, "sst5"); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("sst5: %v", err)
	}
}

func TestSTSAllIsOneCorrelation(t *testing.T) {
	// Each group ranks perfectly on its own, but group g1's similarities
	// are all above group g2's while its gold scores are all below.
	e := &tableEmbedder{vecs: map[string][]float32{}}
	angle := func(name string, deg float64) string {
		r := deg * math.Pi / 180
		e.vecs[name] = []float32{float32(math.Cos(r)), float32(math.Sin(r))}
		return name
	}
	o := angle("o", 0)
	g1 := Group{Name: "y/g1", Pairs: []dataset.SimPair{{A: o, B: angle("a1", 5), Score: 2}, {A: o, B: angle("a2", 10), Score: 1.5}, {A: o, B: angle("a3", 15), Score: 1}}}
	g2 := Group{Name: "y/g2", Pairs: []dataset.SimPair{{A: o, B: angle("b1", 40), Score: 5}, {A: o, B: angle("b2", 50), Score: 4}, {A: o, B: angle("b3", 60), Score: 3}}}
	all, each, err := STSAll(e, []Group{g1, g2})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.calls) != 1 || len(e.calls[0]) != 7 {
		t.Errorf("embed calls %q: want one of the 7 distinct sentences", e.calls)
	}
	if len(each) != 2 || each[0].Spearman != 100 || each[1].Spearman != 100 || all.SubsetMean != 100 {
		t.Errorf("subsets %+v, mean %.2f: want 100 each", each, all.SubsetMean)
	}
	concat, err := STS(e, append(append([]dataset.SimPair(nil), g1.Pairs...), g2.Pairs...))
	if err != nil {
		t.Fatal(err)
	}
	// Similarities in decreasing order are g1's (gold 2, 1.5, 1), then
	// g2's (5, 4, 3): rank differences ±3 for all six pairs, so ρ = 1 −
	// 6·54/(6·35) = −0.542857.
	if all.N != 6 || all.Spearman != concat.Spearman || all.Pearson != concat.Pearson || math.Abs(all.Spearman-(-54.285714)) > 1e-4 {
		t.Errorf("all %+v, concatenation %+v: want equal, Spearman −54.29", all, concat)
	}
}

func TestAlignUniform(t *testing.T) {
	e := &tableEmbedder{vecs: map[string][]float32{
		"x": {2, 0}, "x again": {5, 0}, "y": {0, 3}, "z": {-1, 0},
	}}
	// Identical directions: alignment 0 over the positive pairs; the pair
	// scored 3.9 is not positive.
	pairs := []dataset.SimPair{{A: "x", B: "x again", Score: 4}, {A: "x", B: "y", Score: 3.9}, {A: "y", B: "z", Score: 1}}
	r, err := AlignUniform(e, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Align != 0 || r.Positives != 1 || r.Sentences != 4 {
		t.Errorf("%+v: want alignment 0 over 1 positive pair, 4 sentences", r)
	}
	// Three points: e1, e2, −e1 (after normalising): squared distances 2,
	// 4, 2.
	r, err = AlignUniform(e, []dataset.SimPair{{A: "x", B: "y", Score: 5}, {A: "y", B: "z", Score: 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Log((2*math.Exp(-4) + math.Exp(-8)) / 3)
	if r.Sentences != 3 || math.Abs(r.Uniform-want) > 1e-12 || math.Abs(r.Align-2) > 1e-12 {
		t.Errorf("%+v: want uniformity %.6f, alignment 2 (‖e1 − e2‖²)", r, want)
	}
	if _, err := AlignUniform(e, []dataset.SimPair{{A: "x", B: "y", Score: 1}}); err == nil {
		t.Error("no positive pair: accepted")
	}
}
