package defense

import (
	"errors"
	"fmt"
	"strings"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// FLAT is the training objective of FLAT (feature-level adversarial
// training, spec flat.md §3.4) for a classifier with a word mask:
//
//	L = CE(f(W ⊙ x^a), y) + β·L_ent + γ·L_imp
//
// with W a hard straight-through Gumbel sample of the mask at the batch
// text x^a, L_ent the mean over real tokens of φ log φ + (1−φ) log(1−φ)
// (minus the mean entropy), and L_imp = (1/B) Σ_b Σ_i |φ(x^o_{b,i}) −
// φ(x^a_{b,i})| over the positions where the batch text differs from its
// original. Originals are registered with SetPairs; a batch row without a
// registered original is its own original (a clean pair, L_imp = 0).
// A model without a word mask has φ ≡ 1, the -adv baseline (spec §3.3);
// it is accepted only with β = γ = 0.
//
// For a sub-word model (Words set) L_imp compares words, not ids (spec
// §3.4, F5): each word's φ is the maximum of its pieces' φ, the two texts'
// words are aligned by position up to the shorter word count, and every
// aligned pair whose pieces differ adds |φ_w − φ_w'|.
type FLAT struct {
	Beta, Gamma float64
	// Entropy is L_ent's reduction (spec F4); "" is the default, the mean
	// over real tokens.
	Entropy nn.EntropyReduction
	// ProbInputs: the reference code's double softmax (train.ClassLoss).
	ProbInputs bool
	// Words tells how a sub-word model's ids form words (PieceWordsOf a
	// transformer's WordPiece); nil for a word-level model, whose ids
	// are its words.
	Words *PieceWords
	orig  map[string][]int32
}

// PieceWords tells how a sub-word model's ids group into words: a piece
// that continues a word (WordPiece's "##ing") joins the word before it,
// and special pieces ([CLS], [SEP], padding) belong to no word. A "word"
// is thus one of the WordPiece pre-tokenizer's (white-space and
// punctuation split: "don't" is three).
type PieceWords struct {
	// Continues and Special are indexed by id; an id beyond them starts a
	// word of its own.
	Continues, Special []bool
}

// PieceWordsOf builds the table of a WordPiece vocabulary: its
// continuing-prefix pieces and its [CLS], [SEP] and padding ids.
func PieceWordsOf(wp *text.WordPiece) *PieceWords {
	n := wp.Size()
	w := &PieceWords{Continues: make([]bool, n), Special: make([]bool, n)}
	prefix := wp.Options().ContinuingPrefix
	for id := range n {
		w.Continues[id] = prefix != "" && strings.HasPrefix(wp.Token(int32(id)), prefix)
	}
	for _, id := range []int32{wp.CLSID(), wp.SEPID(), wp.PadID()} {
		w.Special[id] = true
		w.Continues[id] = false
	}
	return w
}

// Split returns the words of ids, each as the positions of its pieces in
// ids. A continuing piece with no word before it (the first one, or one
// after a special piece) starts a word.
func (w *PieceWords) Split(ids []int32) [][]int {
	var words [][]int
	open := false // the last piece belongs to a word that may go on
	for i, id := range ids {
		known := id >= 0 && int(id) < len(w.Special)
		switch {
		case known && w.Special[id]:
			open = false
		case known && w.Continues[id] && open:
			words[len(words)-1] = append(words[len(words)-1], i)
		default:
			words = append(words, []int{i})
			open = true
		}
	}
	return words
}

// samePieces reports whether word positions pa of a and pb of b hold the
// same ids.
func samePieces(a []int32, pa []int, b []int32, pb []int) bool {
	if len(pa) != len(pb) {
		return false
	}
	for k := range pa {
		if a[pa[k]] != b[pb[k]] {
			return false
		}
	}
	return true
}

// Substituted returns the aligned word pairs (position lists into orig and
// adv) whose pieces differ: words aligned by position up to the shorter
// word count (spec §3.4). With w nil every id is a word.
func (w *PieceWords) Substituted(orig, adv []int32) (o, a [][]int) {
	if w == nil {
		for i := 0; i < min(len(orig), len(adv)); i++ {
			if orig[i] != adv[i] {
				o, a = append(o, []int{i}), append(a, []int{i})
			}
		}
		return o, a
	}
	ow, aw := w.Split(orig), w.Split(adv)
	for k := 0; k < min(len(ow), len(aw)); k++ {
		if !samePieces(orig, ow[k], adv, aw[k]) {
			o, a = append(o, ow[k]), append(a, aw[k])
		}
	}
	return o, a
}

// DefaultFLATBeta and DefaultFLATGamma are spec §5's β and γ.
const (
	DefaultFLATBeta  = 0.1
	DefaultFLATGamma = 0.001
)

// NewFLAT checks the weights.
func NewFLAT(beta, gamma float64) (*FLAT, error) {
	if beta < 0 || gamma < 0 {
		return nil, fmt.Errorf("flat: beta %g and gamma %g must not be negative", beta, gamma)
	}
	return &FLAT{Beta: beta, Gamma: gamma, orig: map[string][]int32{}}, nil
}

// Name implements train.Objective.
func (*FLAT) Name() string { return "flat" }

// Info is recorded with the trained model and checked on resume, so it
// holds settings only (the rounds' pair counts are in RoundsResult).
func (f *FLAT) Info() map[string]any {
	red, _ := nn.ParseEntropyReduction(string(f.Entropy))
	info := map[string]any{"beta": f.Beta, "gamma": f.Gamma, "entropy_reduction": red}
	if f.Words != nil {
		info["imp_words"] = "max over pieces" // L_imp over words (spec F5)
	}
	return train.ProbInputsInfo(f.ProbInputs, info)
}

// Pair is an original text and its adversarial version, as token ids.
type Pair struct{ Orig, Adv []int32 }

func idsKey(ids []int32) string {
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
	}
	return string(b)
}

// SetPairs replaces the registered (original, adversarial) pairs (D' is
// replaced every round, spec §4.1). Pairs whose texts are equal are
// skipped.
func (f *FLAT) SetPairs(ps []Pair) {
	f.orig = map[string][]int32{}
	for _, p := range ps {
		k := idsKey(p.Adv)
		if _, dup := f.orig[k]; !dup && idsKey(p.Orig) != k {
			f.orig[k] = p.Orig
		}
	}
}

// Loss implements train.Objective.
func (f *FLAT) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	var phi, s *ag.Var
	if m.Mask != nil {
		// As Forward: the word mask, then a group mask if any.
		var mo nn.MaskOut
		s, mo = m.EncodeMasked(t, b, true)
		phi = mo.Phi
	} else {
		// Masks disabled, φ ≡ 1: both regularisers are constants, and FLAT
		// reduces to the -adv objective (spec §3.3, check 6): the same
		// encoding as Forward. Nonzero weights then mean a model built
		// without its mask by mistake.
		if f.Beta != 0 || f.Gamma != 0 {
			return train.Output{}, errors.New("flat: the model has no word mask (build it with Config.Mask); without one (φ ≡ 1) beta and gamma must be 0")
		}
		phi = ones(t, b.B*b.L)
		s = m.EncodeBatch(t, b, true)
	}
	logits := m.Head(t, s)
	ce := train.ClassLoss(t, logits, b.Labels, f.ProbInputs)
	red, err := nn.ParseEntropyReduction(string(f.Entropy))
	if err != nil {
		return train.Output{}, fmt.Errorf("flat: %w", err)
	}
	ent := nn.NegEntropy(t, phi, b.B, b.L, b.Lengths, red)
	imp := f.importanceGap(t, m, b, phi)
	loss := t.Add(ce, t.Scale(ent, float32(f.Beta)))
	terms := map[string]float32{"ce": ce.Item(), "neg_entropy": ent.Item()}
	if imp != nil {
		loss = t.Add(loss, t.Scale(imp, float32(f.Gamma)))
		terms["imp"] = imp.Item()
	} else {
		terms["imp"] = 0
	}
	return train.Output{Loss: loss, Logits: logits, Terms: terms}, nil
}

// importanceGap is L_imp of a batch given φ at its positions ([B·L, 1]);
// nil when no row differs from its original. A word of several pieces
// takes the largest of their φ: the maximum is picked from the values and
// that piece's φ gathered, so the gradient reaches the mask network
// through the piece a max-pooling would pass it to.
func (f *FLAT) importanceGap(t *ag.Tape, m *nn.Classifier, b *nn.Batch, phi *ag.Var) *ag.Var {
	var advAt [][]int  // per substituted word: its positions in the batch
	var origAt [][]int // per substituted word: its pieces' indices in origIDs
	var origIDs []int32
	for r := 0; r < b.B; r++ {
		row := b.IDs[r*b.L : r*b.L+b.Lengths[r]]
		o, ok := f.orig[idsKey(row)]
		if !ok {
			continue
		}
		ow, aw := f.Words.Substituted(o, row)
		for k := range ow {
			at := make([]int, len(ow[k]))
			for j, i := range ow[k] {
				at[j] = len(origIDs)
				origIDs = append(origIDs, o[i])
			}
			pos := make([]int, len(aw[k]))
			for j, i := range aw[k] {
				pos[j] = r*b.L + i
			}
			origAt, advAt = append(origAt, at), append(advAt, pos)
		}
	}
	if len(advAt) == 0 {
		return nil
	}
	var po *ag.Var
	if m.Mask != nil {
		po = m.Mask.PositionPhi(t, m.Emb, m.MapIDs(origIDs))
	} else {
		po = ones(t, len(origIDs))
	}
	oi, ai := make([]int, len(advAt)), make([]int, len(advAt))
	for k := range advAt {
		oi[k], ai[k] = argmaxAt(po.Data(), origAt[k]), argmaxAt(phi.Data(), advAt[k])
	}
	gap := t.Sum(t.Abs(t.Sub(t.Gather(po, oi), t.Gather(phi, ai))))
	return t.Scale(gap, 1/float32(b.B))
}

// argmaxAt returns the index among at whose value in v is the largest
// (the first on ties).
func argmaxAt(v []float32, at []int) int {
	best := at[0]
	for _, i := range at[1:] {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// ones is a constant [n, 1] column of ones: φ of a disabled mask.
func ones(t *ag.Tape, n int) *ag.Var {
	o := tensor.New(n, 1)
	for i := range o.Data {
		o.Data[i] = 1
	}
	return t.Const(o)
}

// ImportanceGap is the mean |φ_w − φ_w'| over the substituted positions of
// the pairs (inference-mode φ): FLAT's consistency diagnostic (spec §13.9).
// It returns the mean and the number of word pairs.
func ImportanceGap(m *nn.Classifier, ps []Pair) (float64, int) {
	return ImportanceGapWords(m, ps, nil)
}

// ImportanceGapWords is ImportanceGap over the words of a sub-word model
// (words nil: every id is a word): a word's φ is the largest of its pieces',
// and the pairs' words are aligned as L_imp aligns them.
func ImportanceGapWords(m *nn.Classifier, ps []Pair, words *PieceWords) (float64, int) {
	phi := m.WordImportance()
	if phi == nil {
		return 0, 0
	}
	wordPhi := func(ids []int32, at []int) float32 {
		best := float32(0)
		for _, i := range at {
			best = max(best, phi[m.MapID(ids[i])])
		}
		return best
	}
	var sum float64
	n := 0
	for _, p := range ps {
		ow, aw := words.Substituted(p.Orig, p.Adv)
		for k := range ow {
			if words == nil && m.MapID(p.Orig[ow[k][0]]) == m.MapID(p.Adv[aw[k][0]]) {
				continue // the same word after the id map
			}
			d := float64(wordPhi(p.Orig, ow[k]) - wordPhi(p.Adv, aw[k]))
			if d < 0 {
				d = -d
			}
			sum += d
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
