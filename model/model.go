// Package model is a trained text classifier as a user ships it: the
// network, its vocabulary, tokenizer and class names, saved together as one
// model directory and loaded with one call.
package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// Meta is everything besides the weights that a model needs to read text,
// plus a record of how it was trained.
type Meta struct {
	Net       nn.Config      `json:"net"`
	Tokenizer string         `json:"tokenizer"`
	MaxLen    int            `json:"max_len"`
	Classes   []string       `json:"classes"`
	Training  map[string]any `json:"training,omitempty"`
	// Pieces, when set, is the WordPiece tokenizer a transformer reads with
	// (the saved vocabulary is its piece list, MaxLen counts pieces with
	// [CLS] and [SEP]); Tokenizer then only splits words for attacks and
	// explanations.
	Pieces *text.WordPieceOptions `json:"wordpiece,omitempty"`
	// Sentence is how Embed makes sentence embeddings; nil pools as the
	// classifier does.
	Sentence *SentenceSpec `json:"sentence,omitempty"`
}

// Model couples a classifier with the text pipeline it was trained with.
type Model struct {
	Meta
	Net   *nn.Classifier
	Vocab *text.Vocab
	Tok   text.Tokenizer
	// Pieces is the subword tokenizer of a transformer (nil otherwise); its
	// models have an open word Vocab, for attacks that name any word.
	Pieces *text.WordPiece
}

// New builds a randomly initialised model.
func New(meta Meta, vocab *text.Vocab, rng *rand.Rand) (*Model, error) {
	meta.Net.VocabSize = vocab.Len()
	meta.Net.NumClasses = len(meta.Classes)
	net, err := nn.New(meta.Net, rng)
	if err != nil {
		return nil, err
	}
	tok, err := text.NewTokenizer(meta.Tokenizer)
	if err != nil {
		return nil, err
	}
	return &Model{Meta: meta, Net: net, Vocab: vocab, Tok: tok}, nil
}

// Save writes the model directory atomically.
func (m *Model) Save(dir string) error {
	m.Meta.Net = m.Net.Cfg
	cfg, err := json.Marshal(m.Meta)
	if err != nil {
		return err
	}
	return checkpoint.Save(dir, &checkpoint.Bundle{Config: cfg, Vocab: m.VocabWords(), Tensors: m.Net.Tensors()})
}

// WeightsDigest is the SHA-256 of the model's tensors as a model file holds
// them (safetensors, sorted by name): the weights_sha256 that Save records,
// computed in memory. For a saved model, checkpoint.WeightsDigest reads the
// same value from its config.json without reading the weights.
func (m *Model) WeightsDigest() (string, error) {
	h := sha256.New()
	if err := checkpoint.WriteSafetensors(h, m.Net.Tensors(), nil); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VocabWords is the token list the embedding table's rows belong to, as a
// model directory stores it: a transformer's word pieces, else its words.
func (m *Model) VocabWords() []string {
	if m.Pieces != nil {
		return m.Pieces.Vocab()
	}
	return m.Vocab.Words()
}

// Load reads a model directory written by Save, validating it.
func Load(dir string) (*Model, error) {
	b, err := checkpoint.Load(dir)
	if err != nil {
		return nil, err
	}
	var meta Meta
	if err := json.Unmarshal(b.Config, &meta); err != nil {
		return nil, fmt.Errorf("%s: config: %w", dir, err)
	}
	if err := checkPiecesRecord(b.Config); err != nil {
		return nil, fmt.Errorf("%s: config: %w", dir, err)
	}
	if len(b.Vocab) != meta.Net.VocabSize {
		return nil, fmt.Errorf("%s: vocabulary has %d words, the config says %d", dir, len(b.Vocab), meta.Net.VocabSize)
	}
	if err := checkMagnitudes(filepath.Join(dir, checkpoint.WeightsFile), b.Tensors); err != nil {
		return nil, err
	}
	// The config's sizes are checked against the weights before the
	// network is built: an edited embed_dim of 1e9 would allocate until
	// memory runs out before any shape check could fail. They are checked
	// as the network will be built (New and NewTransformer take the class
	// count from the class names), and only once valid: ParamCount of a
	// negative size would cancel a huge one and let it through.
	sized, err := builtConfig(meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	held := 0.0
	for _, t := range b.Tensors {
		held += float64(len(t.Data))
	}
	if need := sized.ParamCount(); !(need <= held) {
		return nil, fmt.Errorf("%s: config.json's sizes need %.0f weights, %s holds %.0f (an edited or mismatched config)", dir, need, checkpoint.WeightsFile, held)
	}
	// A transformer cannot read past its position table, so its texts
	// must be cut to it: no limit (0) would let a long text panic at
	// prediction (FuzzLoad found both a dropped max_len and a dropped
	// wordpiece record leaving one).
	if tc := sized.Transformer; tc != nil && (meta.MaxLen < 1 || meta.MaxLen > tc.MaxPositions) {
		return nil, fmt.Errorf("%s: max length %d: a transformer needs one in [1, %d] (its position table)", dir, meta.MaxLen, tc.MaxPositions)
	}
	var m *Model
	if meta.Pieces != nil {
		wp, err := text.NewWordPiece(b.Vocab, *meta.Pieces)
		if err != nil {
			return nil, fmt.Errorf("%s: vocabulary: %w", dir, err)
		}
		m, err = NewTransformer(meta, wp, rand.New(rand.NewSource(0)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	} else {
		vocab, err := text.NewVocab(b.Vocab)
		if err != nil {
			return nil, fmt.Errorf("%s: vocabulary: %w", dir, err)
		}
		m, err = New(meta, vocab, rand.New(rand.NewSource(0)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	m.Net.Cfg.FreezeEmb = meta.Net.FreezeEmb
	if m.Pairs() && (m.Pieces == nil || m.Net.Cfg.SepID != m.Pieces.SEPID()) {
		return nil, fmt.Errorf("%s: config: the model reads sentence pairs separated by id %d, which is not its tokenizer's separator", dir, m.Net.Cfg.SepID)
	}
	if err := m.Net.LoadTensors(b.Tensors); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return m, nil
}

// builtConfig is the network configuration Load builds from meta, with
// the class count New and NewTransformer take from the class names,
// validated.
func builtConfig(meta Meta) (nn.Config, error) {
	c := meta.Net
	classes := meta.Classes
	if meta.Pieces != nil && len(classes) == 0 {
		classes = placeholderClasses
	}
	c.NumClasses = len(classes)
	return c, c.Validate()
}

// Encode tokenizes a text and maps it to ids, truncated to MaxLen (a
// transformer's word pieces with [CLS] and [SEP]).
func (m *Model) Encode(s string) []int32 {
	ids, _ := m.EncodeCounted(s)
	return ids
}

// EncodeCounted is Encode that also says how many tokens truncation
// dropped, for summaries that report truncated texts.
func (m *Model) EncodeCounted(s string) ([]int32, int) {
	if m.Pieces != nil {
		e := m.Pieces.Encode(s, m.MaxLen)
		return e.IDs, e.Truncated
	}
	words := text.Texts(m.Tok.Tokenize(s))
	dropped := 0
	if m.MaxLen > 0 && len(words) > m.MaxLen {
		dropped = len(words) - m.MaxLen
	}
	return m.Vocab.Encode(words, m.MaxLen), dropped
}

// Prediction is one text's result.
type Prediction struct {
	Label string    `json:"label"`
	Class int       `json:"class"`
	Probs []float32 `json:"probs"`
	// KnownTokens counts the text's tokens in the vocabulary; 0 means the
	// model saw only unknown words.
	KnownTokens int `json:"known_tokens"`
}

// PredictTexts classifies texts in batches.
func (m *Model) PredictTexts(texts []string) []Prediction {
	seqs := make([][]int32, len(texts))
	for i, s := range texts {
		seqs[i] = m.Encode(s)
	}
	return m.predictSeqs(seqs)
}

// predictSeqs classifies encoded texts in batches.
func (m *Model) predictSeqs(seqs [][]int32) []Prediction {
	probs := m.Net.Predict(seqs)
	out := make([]Prediction, len(seqs))
	for i, p := range probs {
		c := nn.Argmax(p)
		known := 0
		for _, id := range seqs[i] {
			if m.Known(id) {
				known++
			}
		}
		label := "" // an encoder without a task has no class names
		if c < len(m.Classes) {
			label = m.Classes[c]
		}
		out[i] = Prediction{Label: label, Class: c, Probs: p, KnownTokens: known}
	}
	return out
}

// Known reports whether id is a real token: not unknown, and for a
// transformer not one of the special tokens either.
func (m *Model) Known(id int32) bool {
	if m.Pieces == nil {
		return id != text.UnkID
	}
	p := m.Pieces
	return id != p.UnkID() && id != p.CLSID() && id != p.SEPID() && id != p.PadID()
}

// checkPiecesRecord refuses a WordPiece record that lacks a setting or has
// one this version does not know: a missing boolean would silently become
// false and change how every text is split.
func checkPiecesRecord(cfg []byte) error {
	var probe struct {
		Pieces json.RawMessage `json:"wordpiece"`
	}
	if err := json.Unmarshal(cfg, &probe); err != nil || len(probe.Pieces) == 0 || string(probe.Pieces) == "null" {
		return nil // no WordPiece tokenizer (or a config error reported elsewhere)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(probe.Pieces, &keys); err != nil {
		return fmt.Errorf("wordpiece: %w", err)
	}
	for _, k := range []string{"lowercase", "chinese_chars"} {
		if _, ok := keys[k]; !ok {
			return fmt.Errorf("wordpiece: the tokenizer record lacks %q", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(probe.Pieces))
	dec.DisallowUnknownFields()
	var o text.WordPieceOptions
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("wordpiece: %w", err)
	}
	return nil
}

// MaxWeight bounds the magnitude of a model's weights at load. Trained
// models stay many orders of magnitude below it; a finite weight near
// float32's limit (a corrupted or hand-made file) overflows the forward
// pass into infinite logits and NaN probabilities with exit code 0.
const MaxWeight = 1e6

// checkMagnitudes refuses a weight beyond ±MaxWeight (or not a number),
// naming where the weights came from and the tensor.
func checkMagnitudes(path string, ts map[string]*tensor.Tensor) error {
	for _, name := range slices.Sorted(maps.Keys(ts)) {
		for i, v := range ts[name].Data {
			if !(v <= MaxWeight && v >= -MaxWeight) {
				return fmt.Errorf("%s: tensor %q holds %g at index %d: no trained model has a weight beyond ±%g (it would overflow the forward pass); the file is corrupted or not a model",
					path, name, v, i, float64(MaxWeight))
			}
		}
	}
	return nil
}

// SetEmbeddings copies the vectors the file had (vecs.Found) into the
// model's embedding table, read for m.Vocab with text.LoadVectors; words
// the file lacks keep their rows and padding stays zero. It returns how
// many rows were copied.
func (m *Model) SetEmbeddings(vecs *text.Vectors) (int, error) {
	table := m.Net.Emb.W.Value
	if table.Shape[1] != vecs.Dim || len(vecs.Found) != m.Vocab.Len() {
		return 0, fmt.Errorf("embeddings: %d×%d vectors for a %d×%d table", len(vecs.Found), vecs.Dim, m.Vocab.Len(), table.Shape[1])
	}
	n := 0
	for id := int32(text.UnkID) + 1; int(id) < m.Vocab.Len(); id++ {
		if vecs.Found[id] {
			copy(table.Data[int(id)*vecs.Dim:(int(id)+1)*vecs.Dim], vecs.Row(id))
			n++
		}
	}
	return n, nil
}

// Decode writes ids, as Encode gives them, back as text: word pieces
// joined (text.WordPiece.Decode), vocabulary words separated by spaces,
// padding dropped.
func (m *Model) Decode(ids []int32) string {
	if m.Pieces != nil {
		return m.Pieces.Decode(ids)
	}
	words := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != nn.PadID {
			words = append(words, m.Vocab.Word(id))
		}
	}
	return strings.Join(words, " ")
}

// AddWords gives every word of texts (as Tok splits them) an id in an open
// vocabulary (a transformer's, a remote victim's): the substitute tables
// an attack builds over the vocabulary then cover the texts it attacks. A
// closed vocabulary is left alone.
func (m *Model) AddWords(texts ...string) {
	if !m.Vocab.Open() {
		return
	}
	for _, s := range texts {
		for _, w := range text.Texts(m.Tok.Tokenize(s)) {
			m.Vocab.ID(w)
		}
	}
}
