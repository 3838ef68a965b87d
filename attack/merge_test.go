package attack

import (
	"context"
	"math/rand"
	"reflect"
	"sync"
	"testing"

	"github.com/textarmor/textarmor/nn"
)

// callCounter counts the victim's Predict calls.
type callCounter struct {
	*nn.Classifier
	mu    sync.Mutex
	calls int
}

func (c *callCounter) Predict(seqs [][]int32) [][]float32 {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Classifier.Predict(seqs)
}

// TestMergeBatchesSameResults: merging the workers' Predict calls gives the
// same results as one worker without merging, for every search, with and
// without the incremental path, and does merge calls.
func TestMergeBatchesSameResults(t *testing.T) {
	tg, syn, ex := synthTask()
	cfg := nn.DefaultConfig("cnn")
	cfg.VocabSize, cfg.EmbedDim, cfg.Filters = tg.Vocab.Len(), 16, 8
	cfg.EmbedInit = 1
	m, err := nn.New(cfg, rand.New(rand.NewSource(5)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Out.W.Value.Data {
		m.Out.W.Value.Data[i] *= 8
	}
	for name, s := range searches() {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Pre: []PreConstraint{MaxModificationRate{Rate: 0.25}}, Search: s}
		for _, noInc := range []bool{false, true} {
			var runs [][]Result
			var calls []int
			for _, merge := range []bool{false, true} {
				cc := &callCounter{Classifier: m}
				vt := tg
				vt.Victim, vt.NoIncremental, vt.InputGrad = cc, noInc, m.InputGradL1
				workers := 1
				if merge {
					workers = 4
				}
				rs, err := RunAll(context.Background(), a, vt, ex, RunOptions{Workers: workers, Seed: 3, MergeBatches: merge})
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, stripSeconds(rs))
				calls = append(calls, cc.calls)
			}
			if !reflect.DeepEqual(runs[0], runs[1]) {
				t.Errorf("%s (no-incremental %v): merged results differ", name, noInc)
			}
			t.Logf("%s (no-incremental %v): %d Predict calls, %d merged", name, noInc, calls[0], calls[1])
			if noInc && calls[1] >= calls[0] {
				t.Errorf("%s: merging made %d calls, %d without", name, calls[1], calls[0])
			}
		}
	}
}
