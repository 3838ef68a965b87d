package defense

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// pieceFixture is a tiny transformer over a WordPiece vocabulary with a
// dictionary of whole-word tokens: "un" is a dictionary word and also the
// first piece of "unreal"; "the" is an FTML stop word.
func pieceFixture(t *testing.T) (*model.Model, *SynonymTable, []string) {
	t.Helper()
	vocab := []string{"[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "film", "good", "great",
		"fine", "bad", "awful", "un", "##real", "##s", "play", "##ing"}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions = 1, 16, 32
	cfg.Transformer, cfg.EmbedDim = &tc, 8
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"neg", "pos"}, Pieces: &opts}, wp, rand.New(rand.NewSource(5)))
	if err != nil {
		t.Fatal(err)
	}
	n := lexicon.NewNeighbors("test")
	n.Set("good", []string{"great", "nice", "fine"})
	n.Set("great", []string{"good"})
	n.Set("fine", []string{"good"})
	n.Set("bad", []string{"awful", "plays"})
	n.Set("awful", []string{"bad"})
	n.Set("movie", []string{"film"})
	n.Set("film", []string{"movie"})
	n.Set("the", []string{"a"})
	dict := []string{"the", "movie", "good", "bad", "film", "great", "awful", "fine", "un"}
	syn, err := NewPieceSynonymTable(n, wp, dict, 8)
	if err != nil {
		t.Fatal(err)
	}
	return m, syn, dict
}

func TestPieceSynonymTable(t *testing.T) {
	m, syn, dict := pieceFixture(t)
	id := func(w string) int32 { i, _ := m.Pieces.ID(w); return i }
	if got := syn.Of(id("good")); !slices.Equal(got, []int32{id("great"), id("fine")}) {
		t.Errorf("S(good) = %v", got)
	}
	if got := syn.Of(id("bad")); !slices.Equal(got, []int32{id("awful")}) {
		t.Errorf("S(bad) = %v (\"plays\" is two pieces, not a dictionary word)", got)
	}
	if syn.Of(id("the")) != nil {
		t.Error("the stop word has synonyms")
	}
	for _, w := range []string{"[CLS]", "[unused0]", "##s", "play"} {
		if syn.IsWord(id(w)) {
			t.Errorf("%s counted as a dictionary word", w)
		}
	}
	if !syn.Pieces() || !syn.Continues(id("##real")) || syn.Continues(id("un")) {
		t.Error("continuation pieces not marked")
	}
	if got := syn.Dictionary(); len(got) != len(dict) || got[0] != id("the") || got[8] != id("un") {
		t.Errorf("dictionary %v", got)
	}
	if with, total := syn.Coverage(); with != 7 || total != 9 {
		t.Errorf("coverage %d of %d, want 7 of 9", with, total)
	}
	for _, bad := range [][]string{{"nice"}, {"##s"}, {"[CLS]"}, {"good", "good"}} {
		if _, err := NewPieceSynonymTable(lexicon.NewNeighbors("x"), m.Pieces, bad, 8); err == nil {
			t.Errorf("dictionary %q accepted", bad)
		}
	}
}

// TestFTMLOnPieces: anchors are dictionary words only (not special tokens,
// pieces, or the first piece of a longer word), negatives come from the
// dictionary, α0 is measured over the dictionary's rows, and the
// cross-entropy never reaches the word-embedding table while it trains the
// position embeddings (spec §4.3 for BERT).
func TestFTMLOnPieces(t *testing.T) {
	m, syn, _ := pieceFixture(t)
	id := func(w string) int32 { i, _ := m.Pieces.ID(w); return i }
	cfg := DefaultFTMLConfig(syn)
	ids := m.Encode("the good unreal movie plays")
	pl := cfg.buildPlan(ids, 1, len(ids), []int{len(ids)}, false)
	if want := []int32{id("the"), id("good"), id("movie")}; !slices.Equal(pl.anchors, want) {
		t.Fatalf("anchors of %v = %v, want %v", ids, pl.anchors, want)
	}
	for i := 0; i < 200; i++ {
		for _, n := range cfg.sampleNegatives(syn.Len()) {
			if !syn.IsWord(n) {
				t.Fatalf("negative %d (%s) is not a dictionary word", n, m.Pieces.Token(n))
			}
		}
	}
	table := m.Net.Emb.W.Value
	cfg.InitAlpha(table)
	var sum float64
	dict := syn.Dictionary()
	d := table.Shape[1]
	for a := range dict {
		for b := a + 1; b < len(dict); b++ {
			sum += dist(table.Data[int(dict[a])*d:int(dict[a]+1)*d], table.Data[int(dict[b])*d:int(dict[b]+1)*d], 2, false)
		}
	}
	if want := sum / float64(len(dict)*(len(dict)-1)/2); cfg.Alpha0 != want || cfg.Alpha != FTMLAlphaFactor*want {
		t.Fatalf("alpha0 %g, alpha %g; want alpha0 %g over the dictionary rows", cfg.Alpha0, cfg.Alpha, want)
	}

	f, err := NewFTML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := nn.MakeBatch([][]int32{ids, m.Encode("bad film")}, []int{1, 0}, 0)
	for _, p := range m.Net.Params() {
		p.ZeroGrad()
	}
	f.negatives = stream{} // the same draw below
	tp := ag.NewTape()
	out, err := f.Loss(tp, m.Net, b)
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(out.Loss)
	full := m.Net.Emb.W.Grad.Clone()
	pos := m.Net.Enc.(*nn.Transformer).Positions.Grad
	if pos == nil || maxAbs(pos.Data) == 0 {
		t.Fatal("cross-entropy did not reach the position embeddings")
	}
	// The triplet term alone, with the same negatives, gives the same
	// gradient on the word-embedding table.
	for _, p := range m.Net.Params() {
		p.ZeroGrad()
	}
	f.negatives = stream{}
	tp = ag.NewTape()
	plan := f.buildPlan(b.IDs, b.B, b.L, b.Lengths, false)
	tr := f.triplet(tp, m.Net.Emb.W.Var, plan, f.sampleNegatives(syn.Len()))
	tp.Backward(tp.Scale(tr, float32(f.Beta)))
	if diff := tensor.MaxAbsDiff(full.Data, m.Net.Emb.W.Grad.Data); diff > 1e-6 {
		t.Fatalf("word-embedding gradient differs from the triplet term's by %g: cross-entropy leaked into the table", diff)
	}
	if maxAbs(full.Data) == 0 {
		t.Fatal("no gradient on the word-embedding table")
	}
	for r := 0; r < full.Shape[0]; r++ {
		row := full.Data[r*d : (r+1)*d]
		if maxAbs(row) != 0 && !syn.IsWord(int32(r)) {
			t.Errorf("row %d (%s) got a metric gradient but is not a dictionary word", r, m.Pieces.Token(int32(r)))
		}
	}
}

// TestSEMOnPieces: codes follow the dictionary's frequency order, and
// pieces and special tokens map to themselves.
func TestSEMOnPieces(t *testing.T) {
	m, syn, _ := pieceFixture(t)
	id := func(w string) int32 { i, _ := m.Pieces.ID(w); return i }
	code := SEMEncoding(syn)
	for w, c := range map[string]string{"good": "good", "great": "good", "fine": "good", "film": "movie", "awful": "bad", "##s": "##s", "[CLS]": "[CLS]", "play": "play"} {
		if code[id(w)] != id(c) {
			t.Errorf("code of %s = %s, want %s", w, m.Pieces.Token(code[id(w)]), c)
		}
	}
}

func maxAbs(x []float32) float32 {
	var m float32
	for _, v := range x {
		m = max(m, v, -v)
	}
	return m
}
