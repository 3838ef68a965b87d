package langmodel

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Marker tokens. In training text and in LogProb's words they are ordinary
// (unknown) words; only Prob reads them as markers.
const (
	BOS     = "<s>"   // sentence-start padding
	EOS     = "</s>"  // sentence end
	Unknown = "<unk>" // rare and unseen words
)

// MaxOrder is the highest supported order: three 21-bit word ids fill a
// uint64 key.
const MaxOrder = 3

const (
	unkID       = 0
	bosID       = 1
	eosID       = 2
	firstWordID = 3 // words[i] has id firstWordID+i

	idBits = 21
	maxIDs = 1 << idBits
)

// Options configures Train.
type Options struct {
	Order    int    // n-gram order, 1 to MaxOrder; 0 means 3
	MinCount int    // words seen fewer times become <unk>; 0 means 1
	Label    string // free-form corpus name, shown by Name
}

// Model is an interpolated modified Kneser-Ney n-gram model.
type Model struct {
	order    int
	minCount int
	label    string
	words    []string // sorted; the id of words[i] is firstWordID+i
	ids      map[string]int32

	// Raw counts of the highest-order n-grams, keys sorted. They determine
	// everything else and are all that Save writes.
	keys   []uint64
	counts []uint32

	disc [MaxOrder + 1][3]float64 // disc[k] = D1, D2, D3+ of order k

	// P(w|h) = alpha(h w) + gamma(h)·P(w|h'), h' being h less its first
	// word; alpha is 0 for unseen n-grams and gamma is 1 for unseen
	// histories. The unigram level is folded into p1.
	p1 []float64 // by id: interpolated unigram probability (0 for <s>)
	g2 []float64 // by id: gamma of the one-word history
	a2 table     // bigram -> alpha
	g3 table     // two-word history -> gamma
	a3 table     // trigram -> alpha
}

// Train estimates a model from tokenised sentences. Words are used as given;
// it is an error if the sentences hold no tokens.
func Train(sentences [][]string, opt Options) (*Model, error) {
	if opt.Order == 0 {
		opt.Order = 3
	}
	if opt.Order < 1 || opt.Order > MaxOrder {
		return nil, fmt.Errorf("langmodel: order %d not in 1..%d", opt.Order, MaxOrder)
	}
	if opt.MinCount < 1 {
		opt.MinCount = 1
	}
	freq := make(map[string]int)
	tokens := 0
	for _, s := range sentences {
		tokens += len(s)
		for _, w := range s {
			if !isMarker(w) {
				freq[w]++
			}
		}
	}
	if tokens == 0 {
		return nil, errors.New("langmodel: no training tokens")
	}
	words := make([]string, 0, len(freq))
	for w, c := range freq {
		if c >= opt.MinCount {
			words = append(words, w)
		}
	}
	slices.Sort(words)
	if len(words) > maxIDs-firstWordID {
		return nil, fmt.Errorf("langmodel: %d word types exceed the limit of %d", len(words), maxIDs-firstWordID)
	}
	m := &Model{order: opt.Order, minCount: opt.MinCount, label: opt.Label, words: words}
	m.index()

	n := opt.Order
	mask := uint64(1)<<(idBits*n) - 1
	var start uint64 // n−1 copies of <s>
	for range n - 1 {
		start = start<<idBits | bosID
	}
	// Counting by sorting the n-gram of every token needs less memory and
	// time than a map: 8 bytes a token, then one linear pass.
	all := make([]uint64, 0, tokens+len(sentences))
	for _, s := range sentences {
		key := start
		for _, w := range s {
			key = (key<<idBits | uint64(m.wordID(w))) & mask
			all = append(all, key)
		}
		all = append(all, (key<<idBits|eosID)&mask)
	}
	slices.Sort(all)
	keys, counts := runLengths(all)
	m.keys = slices.Clone(keys) // release the per-token array
	m.counts = make([]uint32, len(counts))
	for i, c := range counts {
		if c > math.MaxUint32 {
			return nil, fmt.Errorf("langmodel: an n-gram count of %d overflows the model's 32-bit counts", c)
		}
		m.counts[i] = uint32(c)
	}
	m.build()
	return m, nil
}

func isMarker(w string) bool { return w == BOS || w == EOS || w == Unknown }

// index builds the word -> id map.
func (m *Model) index() {
	m.ids = make(map[string]int32, len(m.words))
	for i, w := range m.words {
		m.ids[w] = int32(firstWordID + i)
	}
}

// wordID maps a word of text to its id; markers and unknown words are <unk>.
func (m *Model) wordID(w string) int32 {
	if id, ok := m.ids[w]; ok {
		return id
	}
	return unkID
}

// tokenID is wordID except that marker strings are the markers.
func (m *Model) tokenID(w string) int32 {
	switch w {
	case BOS:
		return bosID
	case EOS:
		return eosID
	}
	return m.wordID(w)
}

// build derives the discounts and probability tables from the raw
// highest-order counts. Train and Load share it, so a loaded model computes
// exactly what the trained one did.
func (m *Model) build() {
	nIDs := len(m.words) + firstWordID
	keys := m.keys
	vals := make([]uint64, len(m.counts))
	for i, c := range m.counts {
		vals[i] = uint64(c)
	}
	for k := m.order; k >= 1; k-- {
		if k < m.order {
			keys, vals = lowerOrder(keys, vals, k)
		}
		m.disc[k] = discounts(vals)
		m.fill(k, nIDs, keys, vals)
	}
}

// runLengths compacts sorted keys in place to the distinct keys and their
// multiplicities.
func runLengths(sorted []uint64) (keys, counts []uint64) {
	keys = sorted[:0]
	for i, k := range sorted {
		if i == 0 || k != keys[len(keys)-1] {
			keys = append(keys, k)
			counts = append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	return keys, counts
}

// lowerOrder turns the (adjusted) counts of order k+1 into those of order
// k: the continuation count N1+(•g), the number of distinct words seen
// before g, or for g starting with <s> its raw count (the sum of its
// extensions' counts, which are raw too since only <s> precedes <s>).
func lowerOrder(keys, vals []uint64, k int) ([]uint64, []uint64) {
	mask := uint64(1)<<(idBits*k) - 1
	firstShift := idBits * (k - 1)
	cont := make([]uint64, 0, len(keys))
	raw := make(map[uint64]uint64) // <s>-initial: few, one per sentence start
	for i, key := range keys {
		g := key & mask
		if g>>firstShift == bosID {
			raw[g] += vals[i]
		} else {
			cont = append(cont, g)
		}
	}
	slices.Sort(cont)
	ck, cv := runLengths(cont)
	rk := make([]uint64, 0, len(raw))
	for g := range raw {
		rk = append(rk, g)
	}
	slices.Sort(rk)
	// The <s>-initial keys form one block of the sorted order: after those
	// starting with <unk> (id 0), before those starting with anything else.
	split, _ := slices.BinarySearch(ck, uint64(bosID)<<firstShift)
	out := make([]uint64, 0, len(ck)+len(rk))
	ov := make([]uint64, 0, len(ck)+len(rk))
	out, ov = append(out, ck[:split]...), append(ov, cv[:split]...)
	for _, g := range rk {
		out, ov = append(out, g), append(ov, raw[g])
	}
	out, ov = append(out, ck[split:]...), append(ov, cv[split:]...)
	return out, ov
}

// discounts estimates D1, D2, D3+ from the count-of-counts as Chen &
// Goodman prescribe, with the fallback k/2 described in the package doc.
func discounts(vals []uint64) [3]float64 {
	var n [5]float64
	for _, c := range vals {
		if c <= 4 {
			n[c]++
		}
	}
	var d [3]float64
	for k := 1; k <= 3; k++ {
		d[k-1] = float64(k) / 2
		if n[1] == 0 || n[k] == 0 {
			continue
		}
		y := n[1] / (n[1] + 2*n[2])
		if v := float64(k) - float64(k+1)*y*n[k+1]/n[k]; v > 0 && v < float64(k) {
			d[k-1] = v
		}
	}
	return d
}

// fill computes alpha and gamma for the n-grams of order k. Keys are sorted,
// so the n-grams sharing a history (key >> idBits) are contiguous.
func (m *Model) fill(k, nIDs int, keys, vals []uint64) {
	d := m.disc[k]
	var alpha1 []float64
	switch k {
	case 1:
		alpha1 = make([]float64, nIDs)
	case 2:
		m.a2 = newTable(len(keys))
		m.g2 = make([]float64, nIDs)
		for i := range m.g2 {
			m.g2[i] = 1
		}
	case 3:
		m.a3 = newTable(len(keys))
		groups := 0
		for i := range keys {
			if i == 0 || keys[i]>>idBits != keys[i-1]>>idBits {
				groups++
			}
		}
		m.g3 = newTable(groups)
	}
	var gamma1 float64
	for i := 0; i < len(keys); {
		h := keys[i] >> idBits
		var total uint64
		var nk [3]uint64
		j := i
		for ; j < len(keys) && keys[j]>>idBits == h; j++ {
			total += vals[j]
			nk[min(vals[j], 3)-1]++
		}
		tf := float64(total)
		gamma := (d[0]*float64(nk[0]) + d[1]*float64(nk[1]) + d[2]*float64(nk[2])) / tf
		for ; i < j; i++ {
			a := (float64(vals[i]) - d[min(vals[i], 3)-1]) / tf
			switch k {
			case 1:
				alpha1[keys[i]] = a
			case 2:
				m.a2.put(keys[i], a)
			case 3:
				m.a3.put(keys[i], a)
			}
		}
		switch k {
		case 1:
			gamma1 = gamma
		case 2:
			m.g2[h] = gamma
		case 3:
			m.g3.put(h, gamma)
		}
	}
	if k == 1 {
		// <s> is never predicted, so the uniform base spreads over the
		// other nIDs−1 tokens.
		u := 1 / float64(nIDs-1)
		m.p1 = alpha1
		for id := range m.p1 {
			if id != bosID {
				m.p1[id] += gamma1 * u
			}
		}
	}
}

// prob is P(w | h) for a history of exactly order−1 ids.
func (m *Model) prob(h []int32, w int32) float64 {
	p := m.p1[w]
	if m.order == 1 {
		return p
	}
	w1 := uint64(h[len(h)-1])
	bigram := w1<<idBits | uint64(w)
	a2, seen2 := m.a2.get(bigram)
	p = a2 + m.g2[w1]*p
	if m.order == 2 {
		return p
	}
	hist := uint64(h[0])<<idBits | w1
	g3, ok := m.g3.get(hist)
	if !ok {
		return p
	}
	var a3 float64
	if seen2 { // a trigram's suffix is always a seen bigram
		a3, _ = m.a3.get(hist<<idBits | uint64(w))
	}
	return a3 + g3*p
}

// Prob returns P(w | the last Order−1 words of context), padding a short
// context with <s> on the left. Here the strings BOS, EOS and Unknown are
// the markers, so Prob(ctx, EOS) is the probability that the sentence ends;
// <s> is never predicted and has probability 0. Other unseen words are
// <unk>.
func (m *Model) Prob(context []string, w string) float64 {
	var h [MaxOrder - 1]int32
	hn := m.order - 1
	for j := range hn {
		if p := len(context) - hn + j; p < 0 {
			h[j] = bosID
		} else {
			h[j] = m.tokenID(context[p])
		}
	}
	return m.prob(h[:hn], m.tokenID(w))
}

// LogProb scores how well words[i] fits its context on both sides: the sum
// of the natural-log probabilities of the tokens at positions i to
// i+Order−1, each given its Order−1 predecessors, where position
// len(words) is </s> (and later ones are not scored) and positions before
// the start are <s>. These are exactly the terms that change when words[i]
// is replaced, so comparing LogProb before and after a substitution
// compares the sentences' probabilities. Marker strings in words are
// ordinary unknown words. For i outside [0, len(words)) it returns −Inf.
func (m *Model) LogProb(words []string, i int) float64 {
	if i < 0 || i >= len(words) {
		return math.Inf(-1)
	}
	n := m.order
	lo, hi := i-(n-1), min(i+n-1, len(words))
	var ids [2*MaxOrder - 1]int32 // positions lo..hi
	for p := lo; p <= hi; p++ {
		switch {
		case p < 0:
			ids[p-lo] = bosID
		case p == len(words):
			ids[p-lo] = eosID
		default:
			ids[p-lo] = m.wordID(words[p])
		}
	}
	var s float64
	for j := i; j <= hi; j++ {
		s += math.Log(m.prob(ids[j-n+1-lo:j-lo], ids[j-lo]))
	}
	return s
}

// SentenceLogProb is the natural-log probability of the whole sentence,
// </s> included (the sum of LogProb's terms over every position).
func (m *Model) SentenceLogProb(words []string) float64 {
	n := m.order
	ids := make([]int32, n-1+len(words)+1)
	for p := range n - 1 {
		ids[p] = bosID
	}
	for p, w := range words {
		ids[n-1+p] = m.wordID(w)
	}
	ids[len(ids)-1] = eosID
	var s float64
	for j := n - 1; j < len(ids); j++ {
		s += math.Log(m.prob(ids[j-n+1:j], ids[j]))
	}
	return s
}

// Name describes the model, e.g. "kn3(imdb-train, V=74849)"; V counts the
// word types, markers excluded.
func (m *Model) Name() string {
	if m.label == "" {
		return fmt.Sprintf("kn%d(V=%d)", m.order, len(m.words))
	}
	return fmt.Sprintf("kn%d(%s, V=%d)", m.order, m.label, len(m.words))
}

// Order returns the n-gram order.
func (m *Model) Order() int { return m.order }

// VocabSize returns the number of word types, markers excluded.
func (m *Model) VocabSize() int { return len(m.words) }

// Label returns Options.Label.
func (m *Model) Label() string { return m.label }

// Discounts returns D1, D2, D3+ of order k (1 ≤ k ≤ Order; zero otherwise).
func (m *Model) Discounts(k int) [3]float64 {
	if k < 1 || k > m.order {
		return [3]float64{}
	}
	return m.disc[k]
}
