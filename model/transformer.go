package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// SentenceSpec is how Embed turns a text into one vector: the pooling of
// the last hidden states (cls, mean or pooler) and whether the vector is
// scaled to unit length. An imported sentence-transformers checkpoint
// brings its own (all-MiniLM-L6-v2: mean, normalised).
type SentenceSpec struct {
	Pool      string `json:"pool"`
	Normalize bool   `json:"normalize"`
}

// ImportOptions says how ImportHF turns a Hugging Face checkpoint into a
// classifier.
type ImportOptions struct {
	// Classes are the task's class names. Empty keeps the checkpoint's
	// classifier and its labels, or, without one, imports the encoder only
	// (Embed works, classification needs fine-tuning first).
	Classes []string
	// Pool is the sentence representation the classifier reads: pooler
	// (BertForSequenceClassification's, and the only one an export
	// reproduces in transformers), cls or mean. Empty means pooler.
	Pool string
	// MaxLen is the longest input in word pieces, [CLS] and [SEP] included;
	// 0 takes the checkpoint's (sentence-transformers' max_seq_length, else
	// the tokenizer's model_max_length), capped at the position table.
	MaxLen int
	// Tokenizer is the word tokenizer attacks and explanations split words
	// with (the model itself reads word pieces); empty means whitespace.
	Tokenizer string
	// Seed draws the weights the checkpoint lacks (a new classifier or
	// pooler), N(0, 0.02) as BERT initialises them.
	Seed int64
	// Reconstructor attaches RAR's token reconstruction head
	// (nn.Reconstructor), decoding with the word embeddings: initialised
	// from the checkpoint's masked-LM head when it has one
	// (cls.predictions.*, carl-rar.md ambiguity 13), else freshly (Seed).
	Reconstructor bool
	// Mask attaches FLAT's variational word mask (nn.Config.Mask), which
	// the checkpoint has none of: its importance network (width
	// MaskHidden, 0 = nn.DefaultMaskHidden, input the hidden size) is drawn
	// from Seed. φ comes from each piece's word-embedding row and scales the
	// input states of the first layer (nn.Transformer.EncodeScaled).
	Mask       bool
	MaskHidden int
}

// reconstructorHF maps the reconstruction head's tensors to those of
// BERT's masked-LM head, which has its shape (dense H→H, the encoder's
// activation, LayerNorm, the tied decoder's bias).
var reconstructorHF = map[string]string{
	"reconstructor.dense.weight": "cls.predictions.transform.dense.weight",
	"reconstructor.dense.bias":   "cls.predictions.transform.dense.bias",
	"reconstructor.norm.weight":  "cls.predictions.transform.LayerNorm.weight",
	"reconstructor.norm.bias":    "cls.predictions.transform.LayerNorm.bias",
	"reconstructor.bias":         "cls.predictions.bias",
}

// placeholderClasses stand for the classes of an encoder imported without
// a task: the network needs a head, which nothing reads.
var placeholderClasses = []string{"LABEL_0", "LABEL_1"}

// ImportHF reads a Hugging Face BERT-architecture directory (config.json,
// model.safetensors, vocab.txt or tokenizer.json) as a model: the encoder's
// weights exactly, the tokenizer's settings, and the checkpoint's
// sentence-embedding setup. Every shape is checked before weights are
// read, and the vocabulary must match the embedding table. What the
// checkpoint holds beyond a BERT encoder (another head, a Dense module) is
// not loaded and listed in Training["import_warnings"].
func ImportHF(dir string, opt ImportOptions) (*Model, error) {
	hf, err := checkpoint.LoadHF(dir)
	if err != nil {
		return nil, err
	}
	if err := checkMagnitudes(dir, hf.Tensors); err != nil { // the weights may be sharded: name the folder
		return nil, err
	}
	wp, err := text.LoadWordPiece(dir)
	if err != nil {
		return nil, err
	}
	c := hf.Config
	if wp.Size() != c.VocabSize {
		return nil, fmt.Errorf("%s: the tokenizer has %d tokens but config.json's vocab_size (the embedding table) is %d", dir, wp.Size(), c.VocabSize)
	}
	classes := opt.Classes
	useHead := false
	if hf.HasClassifier {
		switch {
		case len(classes) == 0:
			classes, useHead = hf.Labels, true
		case len(classes) == len(hf.Labels):
			useHead = true
		}
	}
	encoderOnly := len(classes) == 0
	if encoderOnly {
		classes = placeholderClasses
	}
	pool := opt.Pool
	if pool == "" {
		pool = "pooler"
	}
	maxLen := opt.MaxLen
	if maxLen == 0 {
		maxLen = wp.Options().ModelMaxLength
		if st := hf.SentenceTransformers; st != nil && st.MaxSeqLength > 0 {
			maxLen = st.MaxSeqLength
		}
		if maxLen <= 0 || maxLen > c.MaxPositionEmbeddings {
			maxLen = c.MaxPositionEmbeddings
		}
	}
	if maxLen < 2 || maxLen > c.MaxPositionEmbeddings {
		return nil, fmt.Errorf("max length %d: must be in [2, %d] (the model's positions)", maxLen, c.MaxPositionEmbeddings)
	}
	tc := nn.TransformerConfig{Layers: c.NumHiddenLayers, Heads: c.NumAttentionHeads, Intermediate: c.IntermediateSize,
		Act: c.HiddenAct, MaxPositions: c.MaxPositionEmbeddings, TypeVocab: c.TypeVocabSize, LayerNormEps: c.LayerNormEps,
		HiddenDropout: c.HiddenDropoutProb, AttnDropout: c.AttentionProbsDropoutProb, Pool: pool, Pooler: true}
	cfg := nn.Config{Arch: "transformer", VocabSize: c.VocabSize, EmbedDim: c.HiddenSize, NumClasses: len(classes),
		Dropout: c.HiddenDropoutProb, EmbedInit: 0.02 * math.Sqrt(3), MaxLen: maxLen, Transformer: &tc}
	tokName := opt.Tokenizer
	if tokName == "" {
		tokName = "whitespace"
	}
	opts := wp.Options()
	cfg.Reconstructor = opt.Reconstructor
	if opt.MaskHidden < 0 {
		return nil, fmt.Errorf("mask width %d must not be negative (0 = %d)", opt.MaskHidden, nn.DefaultMaskHidden)
	}
	cfg.Mask, cfg.MaskHidden = opt.Mask, opt.MaskHidden
	meta := Meta{Net: cfg, Tokenizer: tokName, MaxLen: maxLen, Classes: classes, Pieces: &opts}
	if st := hf.SentenceTransformers; st != nil {
		meta.Sentence = &SentenceSpec{Pool: st.Pooling, Normalize: st.Normalize}
	}
	if encoderOnly {
		meta.Classes = nil
	}
	m, err := NewTransformer(meta, wp, rand.New(rand.NewSource(opt.Seed)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := m.loadHFTensors(hf, useHead); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	m.Training = map[string]any{"imported_from": dir, "pooler_from_checkpoint": hf.HasPooler, "head_from_checkpoint": useHead}
	warnings := hf.Warnings
	if opt.Reconstructor {
		m.Training["reconstructor_from_checkpoint"] = hf.HasMLMHead
		if w, ok := hf.Tensors["cls.predictions.decoder.weight"]; ok && tensor.MaxAbsDiff(w.Data, m.Net.Emb.W.Value.Data) != 0 {
			warnings = append(warnings, "the checkpoint's masked-LM decoder weight is not its word-embedding table; the reconstruction head decodes with the table (tied)")
		}
	}
	if len(warnings) > 0 {
		m.Training["import_warnings"] = warnings
	}
	return m, nil
}

// loadHFTensors copies the checkpoint's weights into the network: every
// encoder tensor, the pooler when the checkpoint has one, and its
// classifier (transposed into the head's [in, out]) when useHead.
func (m *Model) loadHFTensors(hf *checkpoint.HFCheckpoint, useHead bool) error {
	for _, p := range m.Net.Params() {
		name := p.Name
		if mlm, ok := reconstructorHF[name]; ok {
			if !hf.HasMLMHead {
				continue // freshly initialised
			}
			name = mlm
		}
		src, ok := hf.Tensors[name]
		switch {
		case !ok && (p == m.Net.Out.W || p == m.Net.Out.B):
			continue
		case !ok && m.Net.Mask != nil && slices.Contains(m.Net.Mask.Params(), p):
			continue // FLAT's word mask: a BERT checkpoint has none
		case !ok && !hf.HasPooler && len(p.Name) > 7 && p.Name[:7] == "pooler.":
			continue // a fresh pooler, as transformers initialises one
		case !ok:
			return fmt.Errorf("the checkpoint lacks tensor %q", p.Name)
		case !tensor.SameShape(src.Shape, p.Value.Shape):
			return fmt.Errorf("tensor %q has shape %v, the model needs %v", p.Name, src.Shape, p.Value.Shape)
		}
		copy(p.Value.Data, src.Data)
	}
	if !useHead {
		return nil
	}
	w, b := hf.Tensors["classifier.weight"], hf.Tensors["classifier.bias"]
	out := m.Net.Out
	in, n := out.W.Value.Shape[0], out.W.Value.Shape[1]
	if w == nil || b == nil || !tensor.SameShape(w.Shape, []int{n, in}) || len(b.Data) != n {
		return errors.New("the checkpoint's classifier does not fit the model's head")
	}
	for r := 0; r < n; r++ {
		for k := 0; k < in; k++ {
			out.W.Value.Data[k*n+r] = w.Data[r*in+k]
		}
	}
	copy(out.B.Value.Data, b.Data)
	return nil
}

// newTransformer builds a model that reads word pieces with wp; the
// classifier and pooler start from BERT's N(0, 0.02).
func NewTransformer(meta Meta, wp *text.WordPiece, rng *rand.Rand) (*Model, error) {
	if meta.Net.Arch != "transformer" {
		return nil, fmt.Errorf("a WordPiece model needs the transformer architecture, not %q", meta.Net.Arch)
	}
	// The encoder cannot read past its position table, so a text must be
	// cut to it: 0 (no limit) or more positions than the table would let a
	// long text panic at prediction (found by FuzzLoad).
	if tc := meta.Net.Transformer; tc != nil && (meta.MaxLen < 2 || meta.MaxLen > tc.MaxPositions) {
		return nil, fmt.Errorf("max length %d: a transformer needs one in [2, %d] (its position table)", meta.MaxLen, tc.MaxPositions)
	}
	classes := meta.Classes
	if len(classes) == 0 {
		classes = placeholderClasses
	}
	meta.Net.VocabSize = wp.Size()
	meta.Net.NumClasses = len(classes)
	net, err := nn.New(meta.Net, rng)
	if err != nil {
		return nil, err
	}
	for _, p := range []*ag.Param{net.Out.W} {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(rng.NormFloat64() * 0.02)
		}
	}
	clear(net.Out.B.Value.Data)
	tok, err := text.NewTokenizer(meta.Tokenizer)
	if err != nil {
		return nil, err
	}
	return &Model{Meta: meta, Net: net, Vocab: text.NewOpenVocab(), Tok: tok, Pieces: wp}, nil
}

// EncoderOnly reports whether the model has no task: an encoder imported
// without classes, whose head is a placeholder. Embed works; Predict needs
// fine-tuning first.
func (m *Model) EncoderOnly() bool { return len(m.Classes) == 0 }

// EmbedBatch is how many texts Embed encodes per forward pass.
const EmbedBatch = 64

// Embed returns one vector per text: the encoder's sentence representation
// pooled as Meta.Sentence says (the imported checkpoint's sentence
// embedding), else as the classifier pools, and normalised to unit length
// when the spec says so. Texts are batched by length.
func (m *Model) Embed(texts []string) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	for i, s := range texts {
		seqs[i] = m.Encode(s)
	}
	return m.EmbedIDs(seqs)
}

// EmbedIDs is Embed for texts already read as ids (Encode's). It is safe
// for concurrent use: each call runs its own inference tape.
func (m *Model) EmbedIDs(seqs [][]int32) ([][]float32, error) {
	tr, ok := m.Net.Enc.(*nn.Transformer)
	if !ok {
		return nil, fmt.Errorf("sentence embeddings need a transformer model, not %s", m.Net.Cfg.Arch)
	}
	spec := SentenceSpec{Pool: tr.Cfg.Pool}
	if m.Sentence != nil {
		spec = *m.Sentence
	}
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(seqs[order[a]]) < len(seqs[order[b]]) })
	out := make([][]float32, len(seqs))
	tp := ag.NewTape()
	tp.NoGrad = true
	for start := 0; start < len(order); start += EmbedBatch {
		idx := order[start:min(start+EmbedBatch, len(order))]
		chunk := make([][]int32, len(idx))
		for j, i := range idx {
			chunk[j] = seqs[i]
		}
		b := nn.MakeBatch(chunk, nil, 1)
		tokens, _ := m.Net.EncodeInput(tp, m.Net.EmbedInput(tp, b), b) // as the classifier reads it (a word mask scales by φ)
		pooled, err := tr.Pool(tp, tokens, b.Lengths, spec.Pool)
		if err != nil {
			return nil, err
		}
		d := pooled.Shape()[1]
		for j, i := range idx {
			v := append([]float32(nil), pooled.Data()[j*d:(j+1)*d]...)
			if spec.Normalize {
				normalize(v)
			}
			out[i] = v
		}
		tp.Reset()
	}
	return out, nil
}

// normalize scales v to unit length (as torch.nn.functional.normalize,
// which divides by max(‖v‖, 1e-12)).
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := math.Max(math.Sqrt(s), 1e-12)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
}

// ExportHF writes a transformer model as a Hugging Face directory that
// transformers loads as BertForSequenceClassification and that gives the
// same logits: the encoder and pooler under "bert.", the head as
// classifier.* ([classes, hidden]), the tokenizer's vocabulary and
// settings, id2label from the classes. Only the pooler pooling is what
// BertForSequenceClassification computes, so a model pooling otherwise is
// refused rather than exported to predict differently. A reconstruction
// head (RAR) goes out as the masked-LM head it is shaped like
// (cls.predictions.*, decoder tied to the word embeddings): transformers
// loads the directory as BertForMaskedLM with it, and as
// BertForSequenceClassification without it (warning that those weights
// are unused); ImportHF with Reconstructor reads it back. An encoder
// imported without a task but with that head goes out as BertForMaskedLM.
func (m *Model) ExportHF(dir string, overwrite bool) error {
	tr, ok := m.Net.Enc.(*nn.Transformer)
	if !ok || m.Pieces == nil {
		return fmt.Errorf("export to Hugging Face needs a transformer model with a WordPiece tokenizer, not %s", m.Net.Cfg.Arch)
	}
	masked := m.EncoderOnly() && m.Net.Rec != nil // an encoder with its masked-LM head ('mlm train-head')
	if m.EncoderOnly() && !masked {
		return errors.New("the model has no task to export a classifier for: fine-tune it first (train --init)")
	}
	if tr.Cfg.Pool != "pooler" || tr.Pooler == nil {
		return fmt.Errorf("the model pools with %q, which BertForSequenceClassification does not compute (it classifies the tanh pooler's output): train with --pool pooler to export", tr.Cfg.Pool)
	}
	if m.Net.Mask != nil {
		return errors.New("the model has FLAT's word mask, which a BertForSequenceClassification cannot hold (its importance network scales the input states by φ; exported without it, the model would predict differently)")
	}
	if len(m.Net.Cfg.IDMap) > 0 || m.Net.GroupMask != nil || m.Net.Hid != nil {
		return errors.New("the model has parts a BertForSequenceClassification cannot hold (an id map, a group mask, or a hidden head layer)")
	}
	c := checkpoint.DefaultBertConfig()
	tc := tr.Cfg
	c.Architectures = []string{"BertForSequenceClassification"}
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads = m.Net.Cfg.VocabSize, tr.Hidden, tc.Layers, tc.Heads
	c.IntermediateSize, c.HiddenAct, c.MaxPositionEmbeddings, c.TypeVocabSize = tc.Intermediate, tc.Act, tc.MaxPositions, tc.TypeVocab
	c.LayerNormEps, c.HiddenDropoutProb, c.AttentionProbsDropoutProb = tc.LayerNormEps, tc.HiddenDropout, tc.AttnDropout
	c.PadTokenID = int(m.Pieces.PadID())
	ts := map[string]*tensor.Tensor{}
	for _, p := range m.Net.Params() {
		if mlm, ok := reconstructorHF[p.Name]; ok {
			ts[mlm] = p.Value
		} else if p != m.Net.Out.W && p != m.Net.Out.B {
			ts[p.Name] = p.Value
		}
	}
	o := m.Pieces.Options()
	h := &checkpoint.HFCheckpoint{Config: c, Tensors: ts, HasPooler: true, Vocab: m.Pieces.Vocab(), DoLowerCase: o.Lowercase, ModelMaxLength: m.MaxLen}
	save := func() error {
		return checkpoint.SaveHF(dir, h, checkpoint.HFSaveOptions{Overwrite: overwrite,
			UnkToken: o.Unk, SepToken: o.SEP, PadToken: o.Pad, ClsToken: o.CLS, MaskToken: o.Mask})
	}
	if masked {
		return save()
	}
	w := m.Net.Out.W.Value
	in, n := w.Shape[0], w.Shape[1]
	cw := tensor.New(n, in)
	for k := 0; k < in; k++ {
		for r := 0; r < n; r++ {
			cw.Data[r*in+k] = w.Data[k*n+r]
		}
	}
	ts["classifier.weight"], ts["classifier.bias"] = cw, m.Net.Out.B.Value
	h.HasClassifier, h.Labels = true, m.Classes
	return save()
}

// FreezeEncoder keeps every weight but the classification head fixed:
// training then fits a linear classifier on the pooled representation, a
// quick baseline (the backward pass stops at the head).
func (m *Model) FreezeEncoder() {
	for _, p := range m.Net.Params() {
		if p != m.Net.Out.W && p != m.Net.Out.B {
			p.Frozen = true
		}
	}
	m.Net.Cfg.FreezeEmb = true
}

// Open loads a model directory written by Save, or imports a Hugging Face
// BERT-architecture directory (encoder only, or with its classifier) when
// config.json is not a textarmor model's: commands that only read a model
// (embed-text, eval-sts, predict) take either.
func Open(dir string) (*Model, error) {
	own, err := isOwnModel(dir)
	if err != nil {
		return nil, err
	}
	if own {
		return Load(dir)
	}
	return ImportHF(dir, ImportOptions{})
}

// isOwnModel reports whether dir's config.json is a textarmor model's
// rather than a Hugging Face checkpoint's.
func isOwnModel(dir string) (bool, error) {
	var probe struct {
		Format    string `json:"format"`
		ModelType string `json:"model_type"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, checkpoint.ConfigFile))
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(dir, checkpoint.ConfigFile), err)
	}
	return probe.Format == checkpoint.Format || probe.ModelType == "", nil
}

// SetMaxLen changes the truncation length (in word pieces for a
// transformer, which cannot read beyond its position table).
func (m *Model) SetMaxLen(n int) error {
	if tc := m.Net.Cfg.Transformer; tc != nil && (n < 2 || n > tc.MaxPositions) {
		return fmt.Errorf("max length %d: must be in [2, %d] (the model's positions)", n, tc.MaxPositions)
	}
	if n < 1 {
		return fmt.Errorf("max length %d must be positive", n)
	}
	m.MaxLen, m.Net.Cfg.MaxLen = n, n
	return nil
}

// Align tokenizes s into words (m.Tok, with byte spans) and into the ids
// the model reads, and gives for each id the word it belongs to (-1 for
// [CLS], [SEP] and anything outside the words), so that per-id scores
// (integrated gradients, LIME) add up to per-word scores. For a word-level
// model id i is word i.
func (m *Model) Align(s string) (words []text.Token, ids []int32, wordOf []int) {
	words = m.Tok.Tokenize(s)
	if m.Pieces == nil {
		ids = m.Encode(s)
		wordOf = make([]int, len(ids))
		for i := range wordOf {
			wordOf[i] = i
		}
		return words[:min(len(words), len(ids))], ids, wordOf
	}
	e := m.Pieces.Encode(s, m.MaxLen)
	wordOf = make([]int, len(e.IDs))
	w := 0
	for i, p := range e.Pieces {
		wordOf[i] = -1
		if p.Start < 0 {
			continue
		}
		for w < len(words) && words[w].End <= p.Start {
			w++
		}
		if w < len(words) && words[w].Start <= p.Start {
			wordOf[i] = w
		}
	}
	return words, e.IDs, wordOf
}

// WordInputGrad is, for each word of s (m.Tok), the L1 norm of the gradient
// of the cross-entropy of label with respect to its input embeddings: the
// sum over the word's pieces for a transformer (model.Align). It serves
// the gradient word-importance order of attacks on text-reading models.
func (m *Model) WordInputGrad(s string, label int) []float64 {
	words, ids, wordOf := m.Align(s)
	return m.wordGrad(len(words), ids, wordOf, label)
}

// wordGrad sums the input gradients of ids over the words wordOf maps
// them to (n words).
func (m *Model) wordGrad(n int, ids []int32, wordOf []int, label int) []float64 {
	g := m.Net.InputGradL1(ids, label)
	out := make([]float64, n)
	for i, w := range wordOf {
		if w >= 0 && w < len(out) && i < len(g) {
			out[w] += g[i]
		}
	}
	return out
}
