package defense

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
)

// Every objective trains models with Jia et al.'s input and hidden head
// layers: the shortcuts that assume a plain model (ASCC's and FGPM's input
// maps, ATFL's exact CNN step) step aside, the loss is finite, and the
// gradient reaches both layers.
func TestObjectivesTrainLayeredModels(t *testing.T) {
	_, syn, tr, _ := setup(t, 4)
	for _, arch := range []string{"cnn", "bilstm"} {
		for _, obj := range benchObjectives(syn) {
			cfg := nn.DefaultConfig(arch)
			cfg.VocabSize, cfg.EmbedDim, cfg.Filters, cfg.Hidden = syn.Len(), 16, 8, 8
			cfg.InputLayer, cfg.HeadHidden, cfg.Dropout = 12, 10, 0.2
			m, err := nn.New(cfg, rand.New(rand.NewSource(5)))
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := obj.(*IBP); ok {
				p.RampSteps = 0
			}
			name := arch + "/" + obj.Name()
			if _, ok := inputMapsOf(m); ok {
				t.Fatalf("%s: input maps offered for a model with an input layer", name)
			}
			if _, ok := newFGPMCNN(NewATFL(syn), m); ok {
				t.Fatalf("%s: the exact CNN step offered for a model with an input layer", name)
			}
			before := [][]float32{slices.Clone(m.In.W.Value.Data), slices.Clone(m.Hid.W.Value.Data)}
			params := m.Params()
			for step := 0; step < 2; step++ {
				tp := ag.NewTape()
				tp.Train = true
				tp.Rng = rand.New(rand.NewSource(int64(step)))
				out, err := obj.Loss(tp, m, exBatch(tr[step*8:(step+1)*8], m.Enc.MinLen()))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if l := float64(out.Loss.Item()); math.IsNaN(l) || math.IsInf(l, 0) {
					t.Fatalf("%s: loss %g", name, l)
				}
				tp.Backward(out.Loss)
				for _, p := range params {
					if p.Grad == nil || p.Frozen {
						continue
					}
					for i, g := range p.Grad.Data {
						p.Value.Data[i] -= 0.05 * g
					}
					p.ZeroGrad()
				}
			}
			for i, w := range []*ag.Param{m.In.W, m.Hid.W} {
				if slices.Equal(before[i], w.Value.Data) {
					t.Errorf("%s: %s did not move", name, w.Name)
				}
			}
		}
	}
}
