package mlm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// Predictor answers the contextual attacks' question — which words fit
// here? — with a masked-LM head, for texts given as words. It is safe for
// concurrent use.
type Predictor struct {
	head   *Head
	wp     *text.WordPiece
	maxLen int
	name   string

	mu    sync.Mutex
	cache map[string]table // texts read for InPlace
}

// NewPredictor reads with m's encoder and masked-LM head (ImportHF with
// Reconstructor, of a checkpoint that has one).
func NewPredictor(m *model.Model, name string) (*Predictor, error) {
	if m.Pieces == nil {
		return nil, errors.New("a masked language model needs a WordPiece model")
	}
	h, err := NewHead(m.Net, 0)
	if err != nil {
		return nil, err
	}
	return &Predictor{head: h, wp: m.Pieces, maxLen: m.MaxLen, name: name, cache: map[string]table{}}, nil
}

// PiecesOf is what a masking may choose and write for m's word pieces:
// its vocabulary, its [MASK], and [CLS], [SEP] and padding left alone.
func PiecesOf(m *model.Model) Pieces {
	w := m.Pieces
	return Pieces{Vocab: m.Net.Cfg.VocabSize, MaskID: w.MaskID(), Special: map[int32]bool{w.CLSID(): true, w.SEPID(): true, w.PadID(): true}}
}

// Name identifies the model in attack descriptions.
func (p *Predictor) Name() string { return p.name }

// logProbs returns the head's log-probabilities at pieces [from, to) of
// words encoded as the model reads them, and the pieces' range of word i.
func (p *Predictor) logProbs(words []string, i int) (rows [][]float32, from, to int) {
	enc, ranges := p.wp.EncodeWords(words, p.maxLen)
	from, to = ranges[i][0], ranges[i][1]
	if from >= to {
		return nil, 0, 0 // truncated away
	}
	b := nn.MakeBatch([][]int32{enc.IDs}, nil, 1)
	pos := make([]int, to-from)
	for k := range pos {
		pos[k] = from + k
	}
	t := ag.NewTape()
	t.NoGrad = true
	logits := p.head.Logits(t, b, pos).Value
	v := logits.Shape[1]
	for k := range pos {
		rows = append(rows, logSoftmax(logits.Data[k*v:(k+1)*v]))
	}
	return rows, from, to
}

func logSoftmax(x []float32) []float32 {
	m := float64(slices.Max(x))
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	lse := m + math.Log(s)
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(float64(v) - lse)
	}
	return out
}

// Masked is BAE's candidate list: word i replaced by [MASK], the k whole
// words the head finds most likely there, each with probability at least
// minProb (word pieces that continue a word, specials and punctuation
// skipped).
func (p *Predictor) Masked(words []string, i, k int, minProb float64) []string {
	w := slices.Clone(words)
	w[i] = p.wp.Options().Mask
	rows, _, _ := p.logProbs(w, i)
	if len(rows) != 1 {
		return nil
	}
	// Only pieces above the floor can be listed: rank those, not the
	// vocabulary (a full insertion ranking of 30k pieces is quadratic).
	row, logMin := rows[0], math.Log(minProb)
	var above []int32
	for id, lp := range row {
		if float64(lp) >= logMin {
			above = append(above, int32(id))
		}
	}
	slices.SortStableFunc(above, func(a, b int32) int { return cmp.Compare(row[b], row[a]) })
	var out []string
	for _, id := range above {
		if len(out) == k {
			break
		}
		if tok := p.wp.Token(id); wholeWord(tok) {
			out = append(out, tok)
		}
	}
	return out
}

// InPlace is BERT-Attack's candidate list: the text read as it is, the
// head's k most likely pieces at word i's position when the word is one
// piece; for a word of n pieces, the k combinations of each position's k
// most likely pieces with the lowest perplexity under the head,
// exp(−mean log p). The combinations are found exactly by a beam of k
// over the positions (a sum of independent terms). One pass serves every
// word of a text: its ranked pieces are cached.
func (p *Predictor) InPlace(words []string, i, k int) []string {
	key := fmt.Sprint(k) + "\x01" + strings.Join(words, "\x00")
	p.mu.Lock()
	tab, ok := p.cache[key]
	p.mu.Unlock()
	if !ok {
		tab = p.rankAll(words, k)
		p.mu.Lock()
		if len(p.cache) >= 256 {
			clear(p.cache)
		}
		p.cache[key] = tab
		p.mu.Unlock()
	}
	rows := tab.pieces[tab.ranges[i][0]:tab.ranges[i][1]]
	switch len(rows) {
	case 0:
		return nil
	case 1:
		var out []string
		for _, id := range rows[0].ids {
			if tok := p.wp.Token(id); wholeWord(tok) {
				out = append(out, tok)
			}
		}
		return out
	}
	var out []string
	for _, c := range bestCombos(rows, k) {
		var b strings.Builder
		for n, id := range c.ids {
			tok := p.wp.Token(id)
			if n == 0 && !wholeWord(tok) || n > 0 && !strings.HasPrefix(tok, "##") {
				b.Reset()
				break
			}
			b.WriteString(strings.TrimPrefix(tok, "##"))
		}
		if b.Len() > 0 {
			out = append(out, b.String())
		}
	}
	return out
}

// ranked is one piece position's k most likely ids, best first, with
// their log-probabilities.
type ranked struct {
	ids []int32
	lp  []float32
}

// table is a text read once: each piece's ranked predictions and each
// word's range of pieces.
type table struct {
	pieces []ranked
	ranges [][2]int
}

func (p *Predictor) rankAll(words []string, k int) table {
	enc, ranges := p.wp.EncodeWords(words, p.maxLen)
	b := nn.MakeBatch([][]int32{enc.IDs}, nil, 1)
	pos := make([]int, len(enc.IDs))
	for j := range pos {
		pos[j] = j
	}
	t := ag.NewTape()
	t.NoGrad = true
	logits := p.head.Logits(t, b, pos).Value
	v := logits.Shape[1]
	tab := table{pieces: make([]ranked, len(pos)), ranges: ranges}
	for j := range pos {
		lp := logSoftmax(logits.Data[j*v : (j+1)*v])
		ids := topK(lp, k)
		r := ranked{ids: ids, lp: make([]float32, len(ids))}
		for n, id := range ids {
			r.lp[n] = lp[id]
		}
		tab.pieces[j] = r
	}
	return tab
}

type combo struct {
	ids []int32
	sum float64 // Σ log p
}

// bestCombos returns the k combinations of one ranked id per row with the
// largest sum of log-probabilities (the lowest perplexity), best first.
// Keeping the k best prefixes after each row is exact, since a best
// combination's prefix is a best prefix.
func bestCombos(rows []ranked, k int) []combo {
	beam := []combo{{}}
	for _, row := range rows {
		var next []combo
		for _, c := range beam {
			for n, id := range row.ids {
				next = append(next, combo{ids: append(slices.Clone(c.ids), id), sum: c.sum + float64(row.lp[n])})
			}
		}
		slices.SortStableFunc(next, func(a, b combo) int { return cmp.Compare(b.sum, a.sum) })
		beam = next[:min(k, len(next))]
	}
	return beam
}

// wholeWord reports whether a vocabulary entry can stand as a word: not a
// continuation piece, not a special token, not only punctuation.
func wholeWord(tok string) bool {
	if tok == "" || strings.HasPrefix(tok, "##") || strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") {
		return false
	}
	return strings.ContainsFunc(tok, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}
