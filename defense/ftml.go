package defense

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// normEps keeps the gradient of ‖·‖₂ finite at zero distance; it adds
// sqrt(1e-20) = 1e-10 to each distance.
const normEps = 1e-20

// FTMLAlphaFactor is α/α0 (spec §4: α = 0.7·α0).
const FTMLAlphaFactor = 0.7

// FTMLConfig holds what FTML and CML share. Start from DefaultFTMLConfig:
// the zero value has β = 0 (a frozen table) and no synonym table.
type FTMLConfig struct {
	// Syn is S(w) by vocabulary id.
	Syn *SynonymTable
	// K is the maximum number of synonyms used per anchor and the number of
	// negatives drawn per batch (spec: 8).
	K int
	// P is the distance norm: 1, 2 or math.Inf(1) (spec §4.1: 2).
	P float64
	// Squared uses ‖·‖₂² instead of ‖·‖₂ (P = 2 only). The spec's loss uses
	// the plain norm; squared distances belong to the δ threshold of the
	// synonym table (§3), so this is off by default and is a deviation.
	Squared bool
	// Alpha is the margin α; 0 means FTMLAlphaFactor·α0, α0 measured on the
	// embedding table at the first Loss call (the initial table).
	Alpha float64
	// Beta weighs the metric term (spec: 1).
	Beta float64
	// CEUpdatesEmbedding lets cross-entropy train the embedding table too.
	// The spec (§4.3, §14 A5) stops that gradient: false.
	CEUpdatesEmbedding bool
	// PullByK divides the pull term by K instead of |S(w)| (§14 A2; the
	// reference implementation's choice). Default: |S(w)| (paper).
	PullByK bool
	// DropEmpty leaves words without synonyms out of the anchors (§14 A3).
	// Default: they are anchors with pull = 0 (paper). CML always drops them.
	DropEmpty bool
	// TokenWeighted averages over all anchor tokens of the batch instead of
	// per text then over texts (§14 A4).
	TokenWeighted bool
	// Seed seeds the negative sampler.
	Seed int64

	// Alpha0 is the α0 measured when Alpha was 0 (0 otherwise).
	Alpha0 float64

	negatives stream
}

// RandomDraws implements train.Random: the negative sampler's position.
func (c *FTMLConfig) RandomDraws() uint64 { return c.negatives.draws() }

// SkipRandom implements train.Random.
func (c *FTMLConfig) SkipRandom(n uint64) { c.negatives.skip(c.Seed, n) }

// DefaultFTMLConfig returns the spec's defaults (k = 8, p = 2, β = 1, α
// from α0, CE does not update the embedding, seed 42) for the synonym table
// syn.
func DefaultFTMLConfig(syn *SynonymTable) FTMLConfig {
	return FTMLConfig{Syn: syn, K: 8, P: 2, Beta: 1, Seed: 42}
}

// Validate checks the settings.
func (c *FTMLConfig) Validate() error {
	switch {
	case c.Syn == nil:
		return errors.New("defense: no synonym table")
	case c.K < 1:
		return fmt.Errorf("defense: k = %d must be positive", c.K)
	case c.P != 1 && c.P != 2 && !math.IsInf(c.P, 1):
		return fmt.Errorf("defense: norm p = %g: want 1, 2 or inf", c.P)
	case c.Squared && c.P != 2:
		return fmt.Errorf("defense: squared distance needs p = 2, not %g", c.P)
	case c.Alpha < 0 || math.IsNaN(c.Alpha):
		return fmt.Errorf("defense: margin alpha = %g must not be negative", c.Alpha)
	case c.Beta < 0 || math.IsNaN(c.Beta):
		return fmt.Errorf("defense: beta = %g must not be negative", c.Beta)
	}
	return nil
}

// Info describes the settings for a model's training record.
func (c *FTMLConfig) Info() map[string]any {
	p := any(c.P)
	if math.IsInf(c.P, 1) {
		p = "inf"
	}
	m := map[string]any{"k": c.K, "norm": p, "squared": c.Squared, "alpha": c.Alpha, "beta": c.Beta,
		"ce_updates_embedding": c.CEUpdatesEmbedding, "seed": c.Seed}
	if c.Alpha0 > 0 {
		m["alpha0"] = c.Alpha0
	}
	if c.PullByK {
		m["pull_norm"] = "k"
	}
	if c.DropEmpty {
		m["drop_empty"] = true
	}
	if c.TokenWeighted {
		m["token_weighted"] = true
	}
	return m
}

// InitAlpha sets Alpha = FTMLAlphaFactor·α0 measured on table when Alpha is
// 0 (and records Alpha0): α0 over the synonym table's dictionary rows.
// Loss calls it on the first batch; call it yourself to know α before
// training.
func (c *FTMLConfig) InitAlpha(table *tensor.Tensor) {
	if c.Alpha > 0 {
		return
	}
	rng := rand.New(rand.NewSource(c.Seed))
	if c.Syn != nil && c.Syn.Pieces() {
		c.Alpha0 = FTMLAlpha0Rows(table, c.Syn.Dictionary(), c.P, c.Squared, rng)
	} else {
		c.Alpha0 = FTMLAlpha0(table, c.P, c.Squared, rng)
	}
	c.Alpha = FTMLAlphaFactor * c.Alpha0
}

// FTMLAlpha0 is FTML's α0: the mean distance between distinct non-special
// rows (ids >= 2) of table [V, D] under the norm p (spec §14 A6): exact when
// there are at most 2·10⁶ pairs, otherwise the mean over 10⁶ random pairs
// drawn by rng.
func FTMLAlpha0(table *tensor.Tensor, p float64, squared bool, rng *rand.Rand) float64 {
	first := int(text.UnkID) + 1
	rows := make([]int32, 0, max(table.Shape[0]-first, 0))
	for id := first; id < table.Shape[0]; id++ {
		rows = append(rows, int32(id))
	}
	return FTMLAlpha0Rows(table, rows, p, squared, rng)
}

// FTMLAlpha0Rows is FTMLAlpha0 over the given rows of table (a
// transformer's dictionary words, spec §4.4 and §14 A6).
func FTMLAlpha0Rows(table *tensor.Tensor, rows []int32, p float64, squared bool, rng *rand.Rand) float64 {
	d := table.Shape[1]
	n := len(rows)
	if n < 2 {
		return 0
	}
	row := func(i int) []float32 { id := int(rows[i]); return table.Data[id*d : (id+1)*d] }
	var sum float64
	var cnt int
	if pairs := n * (n - 1) / 2; pairs <= 2_000_000 {
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				sum += dist(row(a), row(b), p, squared)
			}
		}
		cnt = pairs
	} else {
		for cnt = 0; cnt < 1_000_000; cnt++ {
			a := rng.Intn(n)
			b := rng.Intn(n - 1)
			if b >= a {
				b++
			}
			sum += dist(row(a), row(b), p, squared)
		}
	}
	return sum / float64(cnt)
}

// dist is the distance of two rows in float64.
func dist(a, b []float32, p float64, squared bool) float64 {
	var s float64
	for i := range a {
		x := math.Abs(float64(a[i]) - float64(b[i]))
		switch {
		case p == 1:
			s += x
		case math.IsInf(p, 1):
			s = math.Max(s, x)
		default:
			s += x * x
		}
	}
	if p == 2 && !squared {
		s = math.Sqrt(s)
	}
	return s
}

// sampleNegatives draws K ids uniformly (with replacement) from the
// dictionary: the non-special ids {2, …, V−1} of a word vocabulary, a
// transformer's dictionary words (spec §4.4); one draw per batch.
func (c *FTMLConfig) sampleNegatives(v int) []int32 {
	rng := c.negatives.rand(c.Seed)
	out := make([]int32, c.K)
	if c.Syn.Pieces() {
		dict := c.Syn.Dictionary()
		if len(dict) == 0 {
			return nil
		}
		for i := range out {
			out[i] = dict[rng.Intn(len(dict))]
		}
		return out
	}
	first := int(text.UnkID) + 1
	if v <= first {
		return nil
	}
	for i := range out {
		out[i] = int32(first + rng.Intn(v-first))
	}
	return out
}

// plan is a batch's anchors: unique ids and their weights c_u in the batch
// mean, so the metric term is Σ_u c_u·l(u).
type plan struct {
	anchors []int32
	weight  []float64
}

// buildPlan collects the anchors of ids [B, L]: dictionary words within
// lengths (not padding, not UNK; for a transformer not word pieces, special
// tokens, or the first piece of a longer word). needSyn leaves out words
// without synonyms.
func (c *FTMLConfig) buildPlan(ids []int32, b, l int, lengths []int, needSyn bool) plan {
	idx := map[int32]int{}
	var pl plan
	var perText [][]int32
	var total int
	for r := 0; r < b; r++ {
		n := l
		if lengths != nil {
			n = min(lengths[r], l)
		}
		var row []int32
		seq := ids[r*l : r*l+n]
		for i, id := range seq {
			if !c.Syn.IsWord(id) || (needSyn && len(c.Syn.Of(id)) == 0) || (i+1 < n && c.Syn.Continues(seq[i+1])) {
				continue
			}
			row = append(row, id)
		}
		if len(row) > 0 {
			perText = append(perText, row)
			total += len(row)
		}
	}
	for _, row := range perText {
		w := 1 / float64(len(row)*len(perText))
		if c.TokenWeighted {
			w = 1 / float64(total)
		}
		for _, id := range row {
			j, ok := idx[id]
			if !ok {
				j = len(pl.anchors)
				idx[id] = j
				pl.anchors = append(pl.anchors, id)
				pl.weight = append(pl.weight, 0)
			}
			pl.weight[j] += w
		}
	}
	return pl
}

// distances returns d(anchor_u, other[u,j]) as [U, n] for ids laid out
// row-major [U, n].
func (c *FTMLConfig) distances(t *ag.Tape, table *ag.Var, anchors []int32, other []int32, n int) *ag.Var {
	u := len(anchors)
	rep := make([]int32, 0, u*n)
	for _, a := range anchors {
		for j := 0; j < n; j++ {
			rep = append(rep, a)
		}
	}
	d := t.RowDistances(table, rep, other, c.P, c.Squared, normEps)
	return t.Reshape(d, u, n)
}

// slots lays out the synonyms of each anchor in K columns; unused slots
// hold the anchor itself (distance 0) and mask 0.
func (c *FTMLConfig) slots(anchors []int32) (ids []int32, mask []float32, count []int) {
	ids = make([]int32, 0, len(anchors)*c.K)
	mask = make([]float32, 0, len(anchors)*c.K)
	count = make([]int, len(anchors))
	for i, a := range anchors {
		s := c.Syn.Of(a)
		if len(s) > c.K {
			s = s[:c.K]
		}
		count[i] = len(s)
		for j := 0; j < c.K; j++ {
			if j < len(s) {
				ids, mask = append(ids, s[j]), append(mask, 1)
			} else {
				ids, mask = append(ids, a), append(mask, 0)
			}
		}
	}
	return ids, mask, count
}

// negSlots repeats the shared negatives for each anchor, masking those equal
// to the anchor (spec §14 A7).
func negSlots(anchors, negs []int32) (ids []int32, mask []float32, count []int) {
	count = make([]int, len(anchors))
	for i, a := range anchors {
		for _, n := range negs {
			ids = append(ids, n)
			if n == a {
				mask = append(mask, 0)
			} else {
				mask = append(mask, 1)
				count[i]++
			}
		}
	}
	return ids, mask, count
}

func constOf(t *ag.Tape, data []float32, shape ...int) *ag.Var {
	return t.Const(tensor.From(data, shape...))
}

// triplet is Σ_u c_u·L_tr(u, S(u), N) (spec Eq. 5) on table [V, D].
func (c *FTMLConfig) triplet(t *ag.Tape, table *ag.Var, pl plan, negs []int32) *ag.Var {
	u := len(pl.anchors)
	if u == 0 || len(negs) == 0 {
		return t.Const(tensor.Scalar(0))
	}
	alpha := float32(c.Alpha)
	posIDs, posMask, posCount := c.slots(pl.anchors)
	negIDs, negMask, negCount := negSlots(pl.anchors, negs)
	k, nn := c.K, len(negs)
	posW := make([]float32, u*k)
	negW := make([]float32, u*nn)
	var constant float64
	for i, w := range pl.weight {
		if posCount[i] > 0 {
			den := float64(posCount[i])
			if c.PullByK {
				den = float64(k)
			}
			for j := 0; j < k; j++ {
				posW[i*k+j] = posMask[i*k+j] * float32(w/den)
			}
		}
		if negCount[i] > 0 {
			for j := 0; j < nn; j++ {
				negW[i*nn+j] = negMask[i*nn+j] * float32(w/float64(negCount[i]))
			}
		} else {
			// No usable negative: the push term is 0, the +α stays.
			constant += w * c.Alpha
		}
	}
	dPos := c.distances(t, table, pl.anchors, posIDs, k)
	dNeg := c.distances(t, table, pl.anchors, negIDs, nn)
	pull := t.Sum(t.Mul(dPos, constOf(t, posW, u, k)))
	// −min(d, α) + α = ReLU(α − d).
	push := t.Sum(t.Mul(t.ReLU(t.AddConst(t.Scale(dNeg, -1), alpha)), constOf(t, negW, u, nn)))
	return t.AddConst(t.Add(pull, push), float32(constant))
}

// classify runs the classifier with the embedded input stop-gradiented
// unless CEUpdatesEmbedding, and returns logits and mean cross-entropy.
func (c *FTMLConfig) classify(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (logits, ce *ag.Var) {
	logits = m.Head(t, m.EncodeBatch(t, b, c.CEUpdatesEmbedding))
	return logits, t.CrossEntropy(logits, b.Labels, nil)
}

// FTML is the Fast Triplet Metric Learning objective (spec Eq. 6):
// CE(g(sg[v(x)]), y) + β·(mean triplet loss of the batch's words).
type FTML struct {
	FTMLConfig
}

// NewFTML returns FTML with cfg, checked.
func NewFTML(cfg FTMLConfig) (*FTML, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &FTML{FTMLConfig: cfg}, nil
}

// Name implements train.Objective.
func (f *FTML) Name() string { return "ftml" }

// Loss implements train.Objective.
func (f *FTML) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if f.Syn.Len() != m.Cfg.VocabSize {
		return train.Output{}, fmt.Errorf("ftml: synonym table has %d ids, the model %d", f.Syn.Len(), m.Cfg.VocabSize)
	}
	f.InitAlpha(m.Emb.W.Value)
	logits, ce := f.classify(t, m, b)
	pl := f.buildPlan(b.IDs, b.B, b.L, b.Lengths, f.DropEmpty)
	tr := f.triplet(t, m.Emb.W.Var, pl, f.sampleNegatives(m.Cfg.VocabSize))
	loss := t.Add(ce, t.Scale(tr, float32(f.Beta)))
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": ce.Item(), "triplet": tr.Item()}}, nil
}

// CML is the contrastive variant (spec §12.2, Eq. 7) with temperature Tau.
type CML struct {
	FTMLConfig
	Tau float64
}

// NewCML returns CML with cfg and temperature tau (spec: 20), checked.
func NewCML(cfg FTMLConfig, tau float64) (*CML, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !(tau > 0) || math.IsInf(tau, 1) {
		return nil, fmt.Errorf("cml: temperature %g must be positive and finite", tau)
	}
	return &CML{FTMLConfig: cfg, Tau: tau}, nil
}

// Name implements train.Objective.
func (c *CML) Name() string { return "cml" }

// Info adds τ to FTMLConfig.Info.
func (c *CML) Info() map[string]any {
	m := c.FTMLConfig.Info()
	m["tau"] = c.Tau
	return m
}

// Loss implements train.Objective.
func (c *CML) Loss(t *ag.Tape, m *nn.Classifier, b *nn.Batch) (train.Output, error) {
	if c.Syn.Len() != m.Cfg.VocabSize {
		return train.Output{}, fmt.Errorf("cml: synonym table has %d ids, the model %d", c.Syn.Len(), m.Cfg.VocabSize)
	}
	c.InitAlpha(m.Emb.W.Value)
	logits, ce := c.classify(t, m, b)
	pl := c.buildPlan(b.IDs, b.B, b.L, b.Lengths, true)
	ct := c.contrastive(t, m.Emb.W.Var, pl, c.sampleNegatives(m.Cfg.VocabSize))
	loss := t.Add(ce, t.Scale(ct, float32(c.Beta)))
	return train.Output{Loss: loss, Logits: logits, Terms: map[string]float32{"ce": ce.Item(), "contrastive": ct.Item()}}, nil
}

// contrastive is Σ_u c_u·L_ct(u) (Eq. 7) over anchors with synonyms:
// −log(Σ_{S} e^{−d/τ} / Σ_{S∪N} e^{−min(d,α)/τ}). Each log-sum-exp is
// shifted by a constant (the row's smallest distance) for stability.
func (c *CML) contrastive(t *ag.Tape, table *ag.Var, pl plan, negs []int32) *ag.Var {
	u := len(pl.anchors)
	if u == 0 {
		return t.Const(tensor.Scalar(0))
	}
	alpha, inv := float32(c.Alpha), float32(-1/c.Tau)
	posIDs, posMask, _ := c.slots(pl.anchors)
	negIDs, negMask, _ := negSlots(pl.anchors, negs)
	k, nn := c.K, len(negs)
	dPos := c.distances(t, table, pl.anchors, posIDs, k)
	all := dPos
	mask := posMask
	if nn > 0 {
		dNeg := c.distances(t, table, pl.anchors, negIDs, nn)
		all = t.Concat(1, dPos, dNeg)
		mask = make([]float32, 0, u*(k+nn))
		for i := 0; i < u; i++ {
			mask = append(mask, posMask[i*k:(i+1)*k]...)
			mask = append(mask, negMask[i*nn:(i+1)*nn]...)
		}
	}
	w := k + nn
	// min(d, α) = α − ReLU(α − d).
	clipped := t.AddConst(t.Scale(t.ReLU(t.AddConst(t.Scale(all, -1), alpha)), -1), alpha)
	shiftNum, shiftDen := make([]float32, u), make([]float32, u)
	P, C := dPos.Data(), clipped.Data()
	var constant float64
	for i := 0; i < u; i++ {
		shiftNum[i] = rowMin(P[i*k:(i+1)*k], posMask[i*k:(i+1)*k])
		shiftDen[i] = rowMin(C[i*w:(i+1)*w], mask[i*w:(i+1)*w])
		constant += pl.weight[i] * float64(shiftNum[i]-shiftDen[i]) / c.Tau
	}
	lse := func(d *ag.Var, shift, m []float32, cols int) *ag.Var {
		e := t.Exp(t.Scale(t.Sub(d, constOf(t, shift, u, 1)), inv))
		return t.Log(t.SumLast(t.Mul(e, constOf(t, m, u, cols))))
	}
	num := lse(dPos, shiftNum, posMask, k)
	den := lse(clipped, shiftDen, mask, w)
	cw := make([]float32, u)
	for i, x := range pl.weight {
		cw[i] = float32(x)
	}
	return t.AddConst(t.Sum(t.Mul(t.Sub(den, num), constOf(t, cw, u))), float32(constant))
}

func rowMin(x, mask []float32) float32 {
	m := float32(math.Inf(1))
	for i, v := range x {
		if mask[i] != 0 && v < m {
			m = v
		}
	}
	if math.IsInf(float64(m), 1) {
		return 0
	}
	return m
}
