package model

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

func pairModel(t *testing.T) *Model {
	t.Helper()
	m := tinyTransformer(t)
	if err := m.SetPairs(); err != nil {
		t.Fatal(err)
	}
	return m
}

// A pair is "[CLS] a [SEP] b [SEP]"; the network's token types, derived
// from the ids, are the tokenizer's (0 up to the first [SEP], 1 after),
// also with truncation and inside a padded batch.
func TestEncodePairTypes(t *testing.T) {
	m := pairModel(t)
	ids := m.EncodePair("the movie", "was not good .")
	want := []string{"[CLS]", "the", "movie", "[SEP]", "was", "not", "good", ".", "[SEP]"}
	var got []string
	for _, id := range ids {
		got = append(got, m.Pieces.Token(id))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pieces %v, want %v", got, want)
	}
	if types := m.Net.TypeIDs(ids, len(ids)); !reflect.DeepEqual(types, []int32{0, 0, 0, 0, 1, 1, 1, 1, 1}) {
		t.Errorf("types %v", types)
	}
	// Longest first: with 7 positions (4 pieces for the texts) the longer
	// second text is cut to 2, the first keeps its 2.
	if err := m.SetMaxLen(7); err != nil {
		t.Fatal(err)
	}
	ids, cut := m.EncodePairCounted("the movie", "was not good .")
	if cut != 2 || len(ids) != 7 || m.Pieces.Token(ids[4]) != "was" || m.Pieces.Token(ids[5]) != "not" {
		t.Errorf("truncated pair %v (%d cut)", ids, cut)
	}
	e := m.Pieces.EncodePair("the movie", "was not good .", 7)
	if !reflect.DeepEqual(e.IDs, ids) || !reflect.DeepEqual(m.Net.TypeIDs(ids, len(ids)), e.TypeIDs) {
		t.Errorf("ids %v types %v, tokenizer %v %v", ids, m.Net.TypeIDs(ids, len(ids)), e.IDs, e.TypeIDs)
	}
	// A batch: each row's types from its own first [SEP]; padding is not read.
	short := m.EncodePair("good", "bad")
	b := nn.MakeBatch([][]int32{short, ids}, nil, 1)
	types := m.Net.TypeIDs(b.IDs, b.L)
	if !reflect.DeepEqual(types[:len(short)], []int32{0, 0, 0, 1, 1}) || !reflect.DeepEqual(types[b.L:], e.TypeIDs) {
		t.Errorf("batch types %v", types)
	}
	// b "" is the single text.
	if got, want := m.EncodePair("the movie", ""), m.Encode("the movie"); !reflect.DeepEqual(got, want) {
		t.Errorf("EncodePair(a, \"\") = %v, Encode(a) = %v", got, want)
	}
	// A model that does not read pairs reads no types.
	if tinyTransformer(t).Net.TypeIDs(ids, len(ids)) != nil {
		t.Error("types for a single-text model")
	}
}

// Reading pairs changes nothing for a single text (its only [SEP] is the
// last id), and a pair is read with the second segment's type embedding:
// the same logits as the encoder given the tokenizer's types explicitly.
func TestPairTypesReachTheEncoder(t *testing.T) {
	single := tinyTransformer(t)
	pair := pairModel(t)
	for i, p := range single.PredictTexts(tinyTexts) {
		if q := pair.PredictTexts(tinyTexts[i : i+1])[0]; !reflect.DeepEqual(p.Probs, q.Probs) {
			t.Errorf("%q: %v single, %v with pairs on", tinyTexts[i], p.Probs, q.Probs)
		}
	}
	a, b := "the movie was", "not good"
	got, err := pair.PredictPairs([]string{a}, []string{b})
	if err != nil {
		t.Fatal(err)
	}
	e := pair.Pieces.EncodePair(a, b, pair.MaxLen)
	logits := func(types []int32) []float32 {
		tp := ag.NewTape()
		tp.NoGrad = true
		bt := nn.MakeBatch([][]int32{e.IDs}, nil, 1)
		_, s := pair.Net.Enc.(*nn.Transformer).EncodeTyped(tp, pair.Net.Embed(tp, bt), bt.Lengths, types)
		out := append([]float32(nil), pair.Net.Head(tp, s).Data()...)
		ag.SoftmaxRows(out, 2)
		return out
	}
	if d := tensor.MaxAbsDiff(got[0].Probs, logits(e.TypeIDs)); d > 1e-6 {
		t.Errorf("pair probabilities %v, explicit types %v", got[0].Probs, logits(e.TypeIDs))
	}
	if d := tensor.MaxAbsDiff(got[0].Probs, logits(nil)); d == 0 {
		t.Error("the token types make no difference")
	}
	if _, err := single.PredictPairs([]string{a}, []string{b}); err == nil {
		t.Error("a single-text model predicted pairs")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("EncodePair on a single-text model did not panic")
			}
		}()
		single.EncodePair(a, b)
	}()
}

// The setting is saved and loaded with the model; a separator id that is
// not the tokenizer's is refused.
func TestPairModelSaveLoad(t *testing.T) {
	m := pairModel(t)
	dir := filepath.Join(t.TempDir(), "m")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Pairs() || back.Net.Cfg.SepID != m.Pieces.SEPID() {
		t.Fatalf("loaded: pairs %v sep %d", back.Pairs(), back.Net.Cfg.SepID)
	}
	a, b := []string{"the movie", "bad"}, []string{"was good", "playing , not bad ."}
	p1, _ := m.PredictPairs(a, b)
	p2, _ := back.PredictPairs(a, b)
	for i := range p1 {
		if !reflect.DeepEqual(p1[i].Probs, p2[i].Probs) {
			t.Errorf("pair %d: %v saved, %v loaded", i, p1[i].Probs, p2[i].Probs)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, checkpoint.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"pairs": true`) || strings.Contains(string(mustSaveConfig(t, tinyTransformer(t))), `"pairs"`) {
		t.Errorf("config %s", raw)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bad := patchDigests(editConfig(t, raw, func(net map[string]any) { net["sep_id"] = 2 }), read(checkpoint.WeightsFile), read(checkpoint.VocabFile))
	if err := os.WriteFile(filepath.Join(dir, checkpoint.ConfigFile), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "separator") {
		t.Errorf("wrong separator loaded: %v", err)
	}
}

func mustSaveConfig(t *testing.T, m *Model) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, checkpoint.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Only a transformer with two token types reads pairs.
func TestSetPairsRefused(t *testing.T) {
	m := tinyTransformer(t)
	tc := *m.Net.Cfg.Transformer
	tc.TypeVocab = 1
	m.Net.Cfg.Transformer = &tc
	if err := m.SetPairs(); err == nil || !strings.Contains(err.Error(), "2 token types") {
		t.Errorf("one token type: %v", err)
	}
	cfg := nn.DefaultConfig("cnn")
	cfg.Pairs = true
	cfg.VocabSize, cfg.NumClasses = 10, 2
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "transformer") {
		t.Errorf("cnn with pairs: %v", err)
	}
}

// The gradient word importance of a pair covers the second text's words
// only, as the pair is read.
func TestWordInputGradPair(t *testing.T) {
	m := pairModel(t)
	g := m.WordInputGradPair("the movie was", "not good , playing", 1)
	if len(g) != 4 {
		t.Fatalf("%d values for 4 words", len(g))
	}
	for i, v := range g {
		if !(v > 0) {
			t.Errorf("word %d: gradient %g", i, v)
		}
	}
	words, ids, wordOf := m.alignPair("the movie was", "not good , playing")
	if len(words) != 4 || len(ids) != len(wordOf) {
		t.Fatalf("%d words, %d ids, %d", len(words), len(ids), len(wordOf))
	}
	// [CLS] the movie was [SEP] not good , play ##ing [SEP]
	if want := []int{-1, -1, -1, -1, -1, 0, 1, 2, 3, 3, -1}; !reflect.DeepEqual(wordOf, want) {
		t.Errorf("wordOf %v, want %v", wordOf, want)
	}
}
