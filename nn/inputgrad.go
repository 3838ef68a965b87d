package nn

import "github.com/textarmor/textarmor/ag"

// InputGradL1 returns, for each position of ids, the L1 norm of the
// gradient of the cross-entropy of class label with respect to that
// position's word embedding (as looked up, before the model's input masks;
// a transformer's word mask scales its input states, a constant φ here):
// the gradient word importance of TextAttack's greedy search. It only reads
// the model, so goroutines may call it on one shared Classifier.
func (m *Classifier) InputGradL1(ids []int32, label int) []float64 {
	if len(ids) == 0 {
		return nil
	}
	b := MakeBatch([][]int32{ids}, []int{label}, m.Enc.MinLen())
	look := ag.NewTape()
	look.NoGrad = true
	t := ag.NewTape()
	t.InputGradOnly = true
	x := t.Leaf(m.Embed(look, b).Value)
	_, s := m.EncodeInput(t, m.MaskInput(t, x, m.MapIDs(b.IDs)), b)
	t.Backward(t.CrossEntropy(m.Head(t, s), b.Labels, nil))
	d := m.Emb.Dim()
	out := make([]float64, len(ids))
	if x.Grad == nil {
		return out
	}
	for i := range out {
		for _, g := range x.Grad.Data[i*d : (i+1)*d] {
			if g < 0 {
				g = -g
			}
			out[i] += float64(g)
		}
	}
	return out
}
