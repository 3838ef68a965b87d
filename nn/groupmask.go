package nn

import (
	"fmt"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
)

// GroupMask is FLAT's trivial group-mask baseline (Appendix, Table 10): the
// vocabulary is partitioned into groups (Config.Groups) and every group
// shares one learnable scalar, initialised to 1, that multiplies the
// embeddings of its words before the encoder, in training and at inference
// alike. Unlike WordMask it is deterministic and has no regulariser.
type GroupMask struct {
	// Groups maps a (mapped) word id to its group.
	Groups []int32
	// Scale holds one scalar per group, [NumGroups, 1].
	Scale *ag.Param
}

// NewGroupMask builds the mask for a word id → group table with n groups;
// every scale starts at 1.
func NewGroupMask(groups []int32, n int) *GroupMask {
	s := tensor.New(n, 1)
	for i := range s.Data {
		s.Data[i] = 1
	}
	return &GroupMask{Groups: groups, Scale: ag.NewParam("group_mask", s)}
}

// Params lists the group scales.
func (g *GroupMask) Params() []*ag.Param { return []*ag.Param{g.Scale} }

// groupIDs maps word ids to their groups.
func (g *GroupMask) groupIDs(ids []int32) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		if id < 0 || int(id) >= len(g.Groups) {
			panic(fmt.Sprintf("nn.GroupMask: id %d outside a vocabulary of %d", id, len(g.Groups)))
		}
		out[i] = g.Groups[id]
	}
	return out
}

// Apply scales embedded tokens x [B, L, D] whose ids are ids (row-major
// [B, L]) by their groups' scales.
func (g *GroupMask) Apply(t *ag.Tape, x *ag.Var, ids []int32) *ag.Var {
	sh := x.Shape()
	return t.Mul(x, t.Reshape(g.Factor(t, ids), sh[0], sh[1], 1))
}

// Factor returns each position's group scale, [len(ids), 1].
func (g *GroupMask) Factor(t *ag.Tape, ids []int32) *ag.Var {
	return t.Lookup(g.Scale.Var, g.groupIDs(ids))
}

// InputFactor returns the factor by which the input masks multiply each
// position's embedding, [len(ids), 1] (ids after MapIDs): the word mask's
// (sampled on training tapes, φ otherwise) times the group mask's, and the
// word mask's MaskOut (without X). Both are nil without masks. Encoders
// whose first map is linear in each embedding apply it after that map
// (EncodeMasked).
func (m *Classifier) InputFactor(t *ag.Tape, ids []int32) (*ag.Var, MaskOut) {
	var factor *ag.Var
	var mo MaskOut
	if m.Mask != nil {
		factor, mo = m.Mask.Factor(t, m.Emb, ids)
	}
	if m.GroupMask != nil {
		g := m.GroupMask.Factor(t, ids)
		if factor == nil {
			factor = g
		} else {
			factor = t.Mul(factor, g)
		}
	}
	return factor, mo
}

// MaskInput applies the model's input masks to embedded tokens x [B, L, D]
// with ids ids (row-major [B, L], after MapIDs): FLAT's word mask (sampled
// on training tapes, φ-scaled otherwise) and then the group mask. Without
// either it returns x. Every path that feeds the encoder (Forward, the
// incremental scorer, the explainers' fast paths) goes through here. A
// transformer's word mask is left out: it scales the input states
// (StateMasked; EncodeInput, EncodeStates and StateScale apply it).
func (m *Classifier) MaskInput(t *ag.Tape, x *ag.Var, ids []int32) *ag.Var {
	if m.Mask != nil && m.StateMasked() == nil {
		x = m.Mask.Apply(t, m.Emb, x, ids).X
	}
	return m.ApplyGroupMask(t, x, ids)
}

// ApplyGroupMask applies only the group mask (x itself without one); for
// callers that apply the word mask themselves and need its MaskOut.
func (m *Classifier) ApplyGroupMask(t *ag.Tape, x *ag.Var, ids []int32) *ag.Var {
	if m.GroupMask == nil {
		return x
	}
	return m.GroupMask.Apply(t, x, ids)
}

// InputScale returns, for every id of ids (after MapIDs), the factor by
// which inference multiplies its embedding: φ of the word mask times the
// group scale (without φ for a transformer, whose word mask scales the
// input states: StateScale). It is nil when no mask scales the embedding.
func (m *Classifier) InputScale(ids []int32) []float32 {
	if (m.Mask == nil || m.StateMasked() != nil) && m.GroupMask == nil {
		return nil
	}
	t := ag.NewTape()
	t.NoGrad = true
	ones := tensor.New(1, len(ids), 1)
	for i := range ones.Data {
		ones.Data[i] = 1
	}
	return append([]float32(nil), m.MaskInput(t, t.Const(ones), ids).Data()...)
}

// GroupScales returns every group's current scale (nil without a group
// mask).
func (m *Classifier) GroupScales() []float32 {
	if m.GroupMask == nil {
		return nil
	}
	return append([]float32(nil), m.GroupMask.Scale.Value.Data...)
}

// validateGroups checks Config.Groups against the vocabulary and NumGroups.
func (c Config) validateGroups() error {
	if c.Groups == nil {
		if c.NumGroups != 0 {
			return fmt.Errorf("num_groups %d without a group table", c.NumGroups)
		}
		return nil
	}
	if len(c.Groups) != c.VocabSize {
		return fmt.Errorf("group table has %d entries, the vocabulary %d", len(c.Groups), c.VocabSize)
	}
	if c.NumGroups < 1 {
		return fmt.Errorf("group table with num_groups %d: need at least 1", c.NumGroups)
	}
	for id, g := range c.Groups {
		if g < 0 || int(g) >= c.NumGroups {
			return fmt.Errorf("word %d is in group %d, outside [0, %d)", id, g, c.NumGroups)
		}
	}
	return nil
}
