package model

import (
	"fmt"
	"math/rand"
	"slices"

	"github.com/textarmor/textarmor/ag"
)

// ImportEncoder is ImportHF for either kind of directory: a Hugging Face
// checkpoint, or a textarmor transformer model (a sentence encoder that
// embed-train wrote, a fine-tuned classifier) whose encoder starts a new
// task. From a textarmor model every encoder tensor (word pieces,
// positions, layers, pooler) is copied; the classifier head (and, when
// asked for, a word mask or reconstruction head) starts fresh from
// opt.Seed, for opt.Classes read through opt.Pool ("" = pooler) at
// opt.MaxLen (0 = the model's).
func ImportEncoder(dir string, opt ImportOptions) (*Model, error) {
	own, err := isOwnModel(dir)
	if err != nil {
		return nil, err
	}
	if !own {
		return ImportHF(dir, opt)
	}
	src, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if src.Pieces == nil || src.Net.Cfg.Transformer == nil {
		return nil, fmt.Errorf("%s: a transformer model is needed to start a task from, not %s", dir, src.Net.Cfg.Arch)
	}
	if len(src.Net.Cfg.IDMap) > 0 || src.Net.Cfg.Pairs {
		return nil, fmt.Errorf("%s: a model with an id map (SEM) or one that reads pairs cannot start a new task", dir)
	}
	meta := src.Meta
	meta.Training = nil
	meta.Classes = opt.Classes
	cfg := meta.Net
	tc := *cfg.Transformer
	tc.Pool = opt.Pool
	if tc.Pool == "" {
		tc.Pool = "pooler"
	}
	cfg.Transformer, cfg.IDMap, cfg.Mask, cfg.Reconstructor, cfg.Groups, cfg.NumGroups = &tc, nil, opt.Mask, opt.Reconstructor, nil, 0
	if opt.MaskHidden > 0 {
		cfg.MaskHidden = opt.MaskHidden
	}
	meta.Net = cfg
	if opt.MaxLen > 0 {
		meta.MaxLen = opt.MaxLen
	}
	if opt.Tokenizer != "" {
		meta.Tokenizer = opt.Tokenizer
	}
	m, err := NewTransformer(meta, src.Pieces, rand.New(rand.NewSource(opt.Seed)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := m.SetMaxLen(meta.MaxLen); err != nil {
		return nil, err
	}
	from := map[string]*ag.Param{}
	for _, p := range src.Net.Params() {
		from[p.Name] = p
	}
	fresh := []*ag.Param{m.Net.Out.W, m.Net.Out.B}
	if m.Net.Mask != nil {
		fresh = append(fresh, m.Net.Mask.Params()...)
	}
	if m.Net.Rec != nil {
		fresh = append(fresh, m.Net.Rec.Params()...)
	}
	for _, p := range m.Net.Params() {
		if slices.Contains(fresh, p) {
			continue
		}
		q, ok := from[p.Name]
		if !ok || !slices.Equal(q.Value.Shape, p.Value.Shape) {
			return nil, fmt.Errorf("%s: tensor %q is missing or of another shape", dir, p.Name)
		}
		copy(p.Value.Data, q.Value.Data)
	}
	m.Training = map[string]any{"encoder_from": dir}
	return m, nil
}
