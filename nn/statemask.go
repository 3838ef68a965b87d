package nn

import (
	"fmt"

	"github.com/textarmor/textarmor/ag"
)

// FLAT's word mask on a transformer (spec flat.md §2.2–2.4, F2). φ of a
// position is computed from its word-embedding row only, so a word gets the
// same φ wherever it occurs, but the factor (the sampled mask W in
// training, φ in inference) multiplies the input states of the first layer:
// the embedding layer's output (word + position + token type, after its
// LayerNorm), every non-padding position included ([CLS] and [SEP] too). In
// training a position whose sample is 0 is also removed from the attention
// keys of that pass (unless Config.MaskAttendAll); inference scales by φ and
// leaves the attention as it is.

// StateMasked returns the encoder when the word mask scales a
// transformer's input states (a transformer with a word mask), else nil.
func (m *Classifier) StateMasked() *Transformer {
	if m.Mask == nil {
		return nil
	}
	tr, _ := m.Enc.(*Transformer)
	return tr
}

// stateFactor returns the word mask's factor for the input states at ids
// (after MapIDs), [len(ids), 1]: the sampled mask on training tapes, φ
// otherwise; the attention keys to keep (nil unless a training pass removes
// the masked tokens); and the MaskOut (X nil). m must be StateMasked.
func (m *Classifier) stateFactor(t *ag.Tape, ids []int32) (*ag.Var, []bool, MaskOut) {
	factor, mo := m.Mask.Factor(t, m.Emb, ids)
	var keep []bool
	if mo.W != nil && !m.Cfg.MaskAttendAll {
		w := mo.W.Data()
		keep = make([]bool, len(w))
		for i, v := range w {
			keep[i] = v != 0
		}
	}
	return factor, keep, mo
}

// EncodeInput encodes x [B, L, D], batch b's encoder input as EmbedInput
// gives it (perturbed or not), as Forward does: Encode, except that a
// transformer's word mask (which EmbedInput leaves out) scales its input
// states, sampled on training tapes (removing the dropped tokens from the
// attention keys) and φ otherwise. Head of the sentence gives Forward's
// logits (up to the random draws).
func (m *Classifier) EncodeInput(t *ag.Tape, x *ag.Var, b *Batch) (tokens, sentence *ag.Var) {
	if tr := m.StateMasked(); tr != nil {
		factor, keep, _ := m.stateFactor(t, m.MapIDs(b.IDs))
		return tr.EncodeScaled(t, x, b.Lengths, m.TypeIDs(b.IDs, b.L), factor, keep)
	}
	return m.encodeBatch(t, x, b)
}

// EncodeStates is Encode with a transformer's input states multiplied
// position by position by scale [B·L, 1] (row-major over [B, L]), as
// inference applies φ given by StateScale; scale nil is Encode. Only a
// transformer has input states: other encoders refuse a scale.
func (m *Classifier) EncodeStates(t *ag.Tape, x *ag.Var, lengths []int, scale *ag.Var) (tokens, sentence *ag.Var) {
	if scale == nil {
		return m.Encode(t, x, lengths)
	}
	tr, ok := m.Enc.(*Transformer)
	if !ok {
		panic(fmt.Sprintf("nn.EncodeStates: a %s has no input states to scale", m.Cfg.Arch))
	}
	if m.Cfg.Pairs {
		panic("nn.EncodeStates: a model that reads sentence pairs needs the token types of its batch")
	}
	return tr.EncodeScaled(t, x, lengths, nil, scale, nil)
}

// StateScale returns, for every id of ids (after MapIDs), the factor by
// which inference multiplies a transformer's input state at that position:
// φ of the word, computed from its embedding row. It is nil unless the
// model is StateMasked.
func (m *Classifier) StateScale(ids []int32) []float32 {
	if m.StateMasked() == nil || len(ids) == 0 {
		return nil
	}
	t := ag.NewTape()
	t.NoGrad = true
	return append([]float32(nil), m.Mask.PositionPhi(t, m.Emb, ids).Data()...)
}
