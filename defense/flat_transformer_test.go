package defense

import (
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// pieceVocab is a WordPiece vocabulary over the generated task's words in
// which "excellent" and "terrific" exist only as pieces (two and three).
func pieceVocab() []string {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", "excel", "##lent", "ter", "##ri", "##fic"}
	lex := synth.DefaultLexicon()
	for _, g := range append(lex.Positive, lex.Negative...) {
		for _, w := range g {
			if w != "excellent" && w != "terrific" {
				vocab = append(vocab, w)
			}
		}
	}
	return append(vocab, lex.Neutral...)
}

// tinyPieceTransformer is a random 2-layer BERT (width 16) reading word
// pieces of pieceVocab, with FLAT's word mask when mask.
func tinyPieceTransformer(t *testing.T, mask bool, seed int64) *model.Model {
	t.Helper()
	wp, err := text.NewWordPiece(pieceVocab(), text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 32, 64, "pooler", true
	cfg.Transformer, cfg.EmbedDim, cfg.Mask, cfg.MaskHidden = &tc, 16, mask, 12
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 64, Classes: []string{"negative", "positive"}, Pieces: &opts},
		wp, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPieceWordsSplit(t *testing.T) {
	m := tinyPieceTransformer(t, false, 1)
	w := PieceWordsOf(m.Pieces)
	id := func(s string) int32 {
		i, ok := m.Pieces.ID(s)
		if !ok {
			t.Fatalf("no piece %q", s)
		}
		return i
	}
	ids := []int32{id("[CLS]"), id("##lent"), id("ter"), id("##ri"), id("##fic"), id("good"), id("[SEP]"), id("##ri"), id("[PAD]")}
	if got, want := w.Split(ids), [][]int{{1}, {2, 3, 4}, {5}, {7}}; !reflect.DeepEqual(got, want) {
		t.Errorf("words %v, want %v", got, want)
	}
	// Words aligned by position: the first differs, the second is the same
	// word, the third has no partner in the shorter text.
	o := m.Encode("terrific good film")
	a := m.Encode("dull good")
	ow, aw := w.Substituted(o, a)
	if !reflect.DeepEqual(ow, [][]int{{1, 2, 3}}) || !reflect.DeepEqual(aw, [][]int{{1}}) {
		t.Errorf("substituted words %v / %v", ow, aw)
	}
}

// Spec check 4 for a sub-word model: L_imp compares words (φ max-pooled
// over their pieces, aligned by position) where the piece counts differ;
// it is 0 for a text paired with itself, its gradient reaches the mask
// network, and only the φ of the substituted words' largest pieces get
// gradient.
func TestFLATImportanceTermSubwords(t *testing.T) {
	m := tinyPieceTransformer(t, true, 2)
	// Pieces of unequal importance: the max matters.
	for i := range m.Net.Mask.Out.W.Value.Data {
		m.Net.Mask.Out.W.Value.Data[i] *= 6
	}
	f, _ := NewFLAT(0.1, 1)
	f.Words = PieceWordsOf(m.Pieces)
	orig := m.Encode("the film was excellent and good")
	adv := m.Encode("the movie was terrific and good") // 2 and 3 pieces: the words after shift by one piece
	same := m.Encode("a dull plot")
	if len(orig) == len(adv) {
		t.Fatalf("the pair has %d pieces each: the test needs a shift", len(orig))
	}
	f.SetPairs([]Pair{{orig, adv}, {same, same}})
	b := nn.MakeBatch([][]int32{adv, same}, []int{1, 0}, 1)
	phi := m.Net.WordImportance()
	id := func(s string) int32 { i, _ := m.Pieces.ID(s); return i }
	maxPhi := func(ps ...string) float64 {
		best := 0.0
		for _, p := range ps {
			best = math.Max(best, float64(phi[id(p)]))
		}
		return best
	}
	want := (math.Abs(maxPhi("film")-maxPhi("movie")) + math.Abs(maxPhi("excel", "##lent")-maxPhi("ter", "##ri", "##fic"))) / 2
	tp := &ag.Tape{Train: true, Rng: rand.New(rand.NewSource(1))}
	out, err := f.Loss(tp, m.Net, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(out.Terms["imp"]); math.Abs(got-want) > 1e-6 || want == 0 {
		t.Errorf("L_imp = %g, want %g", got, want)
	}
	// Position by position over the pieces it would be another number.
	var byPiece float64
	for i := 0; i < min(len(orig), len(adv)); i++ {
		if orig[i] != adv[i] {
			byPiece += math.Abs(float64(phi[orig[i]] - phi[adv[i]]))
		}
	}
	if math.Abs(byPiece/2-want) < 1e-3 {
		t.Fatalf("piece-by-piece gap %g equals the word gap %g: the pair cannot tell them apart", byPiece/2, want)
	}
	// The diagnostic pools the same way.
	if gap, n := ImportanceGapWords(m.Net, []Pair{{orig, adv}}, f.Words); n != 2 || math.Abs(gap-want) > 1e-6 {
		t.Errorf("ImportanceGapWords = %g over %d words, want %g over 2", gap, n, want)
	}
	// A text paired with itself: L_imp = 0.
	tp = &ag.Tape{Train: true, Rng: rand.New(rand.NewSource(1))}
	out, _ = f.Loss(tp, m.Net, nn.MakeBatch([][]int32{orig, same}, []int{1, 0}, 1))
	if out.Terms["imp"] != 0 {
		t.Errorf("clean L_imp = %g", out.Terms["imp"])
	}
	// Gradient of L_imp alone.
	tp = ag.NewTape()
	_, mo := m.Net.EncodeMasked(tp, b, true)
	gap := f.importanceGap(tp, m.Net, b, mo.Phi)
	for _, p := range m.Net.Params() {
		p.ZeroGrad()
	}
	tp.Backward(gap)
	var sum float64
	for _, v := range m.Net.Mask.Hidden.W.Grad.Data {
		sum += math.Abs(float64(v))
	}
	if sum == 0 {
		t.Error("no gradient reaches the mask network from L_imp")
	}
	d := m.Net.Emb.Dim()
	rowGrad := func(s string) float64 {
		var g float64
		for _, v := range m.Net.Emb.W.Grad.Data[int(id(s))*d : int(id(s)+1)*d] {
			g += math.Abs(float64(v))
		}
		return g
	}
	for _, w := range []string{"the", "was", "and", "good", "[CLS]", "[SEP]"} {
		if g := rowGrad(w); g != 0 {
			t.Errorf("unchanged piece %q got gradient %g from L_imp", w, g)
		}
	}
	argmax := func(ps ...string) string {
		best := ps[0]
		for _, p := range ps {
			if phi[id(p)] > phi[id(best)] {
				best = p
			}
		}
		return best
	}
	for _, w := range [][]string{{"excel", "##lent"}, {"ter", "##ri", "##fic"}} {
		top := argmax(w...)
		for _, p := range w {
			if g := rowGrad(p); (p == top) != (g != 0) {
				t.Errorf("piece %q of %v (max %q): gradient %g", p, w, top, g)
			}
		}
	}
}

// Spec check 6 on a transformer: with masks disabled (φ ≡ 1), β = γ = 0
// and L_imp over words, the FLAT code path trains exactly the parameters
// of the -adv path (cross-entropy through the same rounds) from the same
// seed, dropout included.
func TestFLATReducesToAdvTransformer(t *testing.T) {
	ds := synth.SentimentDataset(60, 20, 0, 3)
	atk := func(_ *model.Model, ex []dataset.Example, round int) ([]string, error) {
		out := make([]string, len(ex))
		for i, e := range ex {
			w := strings.Fields(e.Text)
			if len(w) > 2 {
				w[round%2] = "terrific" // three pieces: the words shift
			}
			out[i] = strings.Join(w, " ")
		}
		return out, nil
	}
	run := func(obj train.Objective) *model.Model {
		m := tinyPieceTransformer(t, false, 4)
		_, err := AdversarialRounds(m, obj, ds.Train, ds.Dev, atk, RoundsOptions{CleanEpochs: 1, Rounds: 1, RoundEpochs: 1,
			PerRound: 30, Train: train.Options{Out: filepath.Join(t.TempDir(), "m"), LR: 1e-3, BatchSize: 16, Optimizer: "adamw", Seed: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	f, _ := NewFLAT(0, 0)
	f.Words = PieceWordsOf(tinyPieceTransformer(t, false, 4).Pieces)
	flat, adv := run(f), run(train.Standard{})
	init := tinyPieceTransformer(t, false, 4)
	moved := false
	for i, p := range flat.Net.Params() {
		q, p0 := adv.Net.Params()[i], init.Net.Params()[i]
		for j := range p.Value.Data {
			if p.Value.Data[j] != q.Value.Data[j] {
				t.Fatalf("param %s[%d]: FLAT path %g, -adv path %g", p.Name, j, p.Value.Data[j], q.Value.Data[j])
			}
			moved = moved || p.Value.Data[j] != p0.Value.Data[j]
		}
	}
	if !moved {
		t.Fatal("training did not change the parameters; the comparison proves nothing")
	}
}
