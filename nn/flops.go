package nn

// ForwardFLOPs estimates the multiply-add work (2 FLOPs each) of one forward
// pass over a [b, l] batch, counting the matrix products that dominate it.
func (m *Classifier) ForwardFLOPs(b, l int) float64 {
	d := float64(m.EncoderInputDim())
	bl := float64(b * l)
	var f float64
	if m.In != nil {
		f += 2 * bl * float64(m.Cfg.EmbedDim) * d
	}
	switch m.Cfg.Arch {
	case "transformer":
		// Per layer and token: Q, K, V and the output projection (4·d²), the
		// feed-forward (2·d·I) and attention over l keys (scores and
		// weighted values, 2·l·d); the tanh pooler once per sentence.
		tc := m.Cfg.Transformer
		perTok := 4*d*d + 2*d*float64(tc.Intermediate) + 2*float64(l)*d
		f += 2 * bl * perTok * float64(tc.Layers)
		if tc.Pool == "pooler" {
			f += 2 * float64(b) * d * d
		}
	case "cnn":
		for _, w := range m.Cfg.Widths {
			f += 2 * bl * d * float64(w*m.Cfg.Filters)
		}
	default:
		h := float64(m.Cfg.Hidden)
		dirs := 1.0
		if m.Cfg.Arch == "bilstm" {
			dirs = 2
		}
		f += dirs * 2 * bl * (d + h) * 4 * h
	}
	return f + m.headFLOPs(b)
}

func (m *Classifier) headFLOPs(b int) float64 {
	in := m.Enc.OutDim()
	var f float64
	if m.Hid != nil {
		f = 2 * float64(b) * float64(in*m.Cfg.HeadHidden)
		in = m.Cfg.HeadHidden
	}
	return f + 2*float64(b)*float64(in*m.Cfg.NumClasses)
}

// TrainFLOPs estimates the work of one training step (forward, and the
// backward pass to the parameters and the word vectors) that the engine
// performs. A backward pass through a matrix product costs two products of
// the forward's size, except the CNN's convolutions: under max pooling at
// most one window per text and filter has a gradient, and the sparse
// backward costs 2·w·D multiply-adds per such window and target.
func (m *Classifier) TrainFLOPs(b, l int) float64 {
	if m.Cfg.Arch != "cnn" || m.In != nil {
		return 3 * m.ForwardFLOPs(b, l)
	}
	d := float64(m.Cfg.EmbedDim)
	var back float64
	for _, w := range m.Cfg.Widths {
		back += 2 * 2 * float64(b*m.Cfg.Filters) * float64(w) * d
	}
	return m.ForwardFLOPs(b, l) + back + 2*m.headFLOPs(b)
}
