package nn

// ForwardFLOPs estimates the multiply-add work (2 FLOPs each) of one forward
// pass over a [b, l] batch, counting the matrix products that dominate it.
// A training step costs about three times as much.
func (m *Classifier) ForwardFLOPs(b, l int) float64 {
	d := float64(m.Cfg.EmbedDim)
	bl := float64(b * l)
	var f float64
	switch m.Cfg.Arch {
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
	return f + 2*float64(b)*float64(m.Enc.OutDim()*m.Cfg.NumClasses)
}
