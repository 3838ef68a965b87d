package lstmlm

import (
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// corpus is a small language with a clear structure: each text is a
// subject, a verb and an object from small sets, in that order.
func corpus(n int, seed int64) []string {
	r := rand.New(rand.NewSource(seed))
	subj, verb, obj := []string{"the cat", "a dog", "my friend"}, []string{"sees", "likes", "finds"}, []string{"the ball", "a bone", "the park"}
	out := make([]string, n)
	for i := range out {
		out[i] = subj[r.Intn(3)] + " " + verb[r.Intn(3)] + " " + obj[r.Intn(3)]
	}
	return out
}

func tinyModel(t *testing.T, texts []string) *Model {
	t.Helper()
	words := map[string]bool{}
	var docs [][]string
	for _, s := range texts {
		ws := strings.Fields(s)
		docs = append(docs, ws)
		for _, w := range ws {
			words[w] = true
		}
	}
	v := text.BuildVocab(docs, 1, 0)
	vocab, err := text.NewVocab(append(v.Words(), EOS))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.EmbedDim, cfg.Hidden, cfg.Tokenizer = 8, 16, "whitespace"
	m, err := New(cfg, vocab, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The model learns the language: its perplexity on held-out texts falls
// from about the vocabulary's size towards the language's own, 1.73 (per
// predicted word: the noun after the subject's article is certain, the
// verb one of 3, the object's article 2:1, its noun then one of 2 or 1).
func TestTrainLearnsAndSaves(t *testing.T) {
	texts := corpus(400, 1)
	m := tinyModel(t, texts)
	valid := corpus(40, 2)
	var vids [][]int32
	for _, s := range valid {
		vids = append(vids, m.Encode(s))
	}
	before, err := m.Perplexity(vids)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultTrainOptions()
	opt.Epochs, opt.Batch, opt.BPTT, opt.LR, opt.Valid, opt.Out = 15, 8, 10, 1e-2, vids, filepath.Join(t.TempDir(), "lm")
	res, err := Train(m, m.Stream(encodeAll(m, texts)), opt)
	if err != nil {
		t.Fatal(err)
	}
	after := res.Epochs[len(res.Epochs)-1].ValidPPL
	if before < float64(m.Vocab.Len())/2 || after > 2.2 {
		t.Errorf("validation perplexity %.2f before, %.2f after training; want ≈ the vocabulary (%d) before, < 2.2 after", before, after, m.Vocab.Len())
	}
	loaded, err := Load(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loaded.Perplexity(vids)
	if err != nil || math.Abs(again-after) > 1e-6*after {
		t.Errorf("the saved model's perplexity %g, the trained one's %g (%v)", again, after, err)
	}
	// A zero perturbation changes nothing; a large one raises the NLL.
	ids := vids[0]
	base, n, _ := loaded.NLL(ids, nil)
	zero, _, _ := loaded.NLL(ids, make([]float32, len(ids)*8))
	noise := make([]float32, len(ids)*8)
	for i := range noise {
		noise[i] = float32(3 * math.Sin(float64(i)))
	}
	pert, _, _ := loaded.NLL(ids, noise)
	if n != len(ids)-1 || zero != base || pert <= base {
		t.Errorf("NLL %g over %d words, %g with a zero perturbation, %g with noise", base, n, zero, pert)
	}
}

// A run killed inside an epoch (or at its end) and resumed ends with the
// weights of an uninterrupted one: the checkpoint holds the position, the
// optimiser and the carried LSTM state. A resume with other settings is
// refused.
func TestResumeIsExact(t *testing.T) {
	texts := corpus(200, 4)
	run := func(dir string, stop int, lr float64) (*Model, error) {
		m := tinyModel(t, texts)
		opt := DefaultTrainOptions()
		opt.Epochs, opt.Batch, opt.BPTT, opt.LR, opt.Out, opt.Resume = 2, 4, 7, lr, filepath.Join(dir, "lm"), true
		opt.stopAfter = stop
		_, err := Train(m, m.Stream(encodeAll(m, texts)), opt)
		return m, err
	}
	whole, err := run(t.TempDir(), 0, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	// 200 texts of about 6 words in 4 streams of BPTT 7: about 43
	// segments an epoch; stop inside the first, at its end, and inside
	// the second.
	for _, stops := range [][]int{{10}, {43}, {30, 40}} {
		dir := t.TempDir()
		for _, s := range stops {
			if _, err := run(dir, s, 1e-2); err != errStopped {
				t.Fatalf("stop after %d segments: %v", s, err)
			}
		}
		if _, err := run(dir, 0, 5e-3); err == nil || !strings.Contains(err.Error(), "other settings") {
			t.Fatalf("a resume with another --lr: %v", err)
		}
		resumed, err := run(dir, 0, 1e-2)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range whole.Params() {
			if d := tensor.MaxAbsDiff(p.Value.Data, resumed.Params()[i].Value.Data); d != 0 {
				t.Fatalf("stops %v: %s differs by %g after the resume", stops, p.Name, d)
			}
		}
	}
}

func encodeAll(m *Model, texts []string) [][]int32 {
	out := make([][]int32, len(texts))
	for i, s := range texts {
		out[i] = m.Encode(s)
	}
	return out
}

// NLL is the text's negative log-likelihood word by word: the same sum
// as a float64 log-softmax of the forward pass's logits, to float32
// precision, on a vocabulary wide enough for the vector exponentials.
func TestNLLMatchesLogSoftmax(t *testing.T) {
	words := []string{text.PadWord, text.UnkWord}
	for i := range 300 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	vocab, err := text.NewVocab(append(words, EOS))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.EmbedDim, cfg.Hidden, cfg.InitScale = 8, 16, 0.5
	m, err := New(cfg, vocab, rand.New(rand.NewSource(4)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	ids := make([]int32, 40)
	for i := range ids {
		ids[i] = int32(2 + r.Intn(300))
	}
	got, n, err := m.NLL(ids, nil)
	if err != nil || n != len(ids)-1 {
		t.Fatalf("NLL over %d words: %v", n, err)
	}
	tp := ag.NewTape()
	tp.NoGrad = true
	logits := m.forward(tp, ids[:n], 1, n, &ag.LSTMCarry{}, nil).Value
	v := vocab.Len()
	var want float64
	for s := range n {
		row := logits.Data[s*v : (s+1)*v]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = math.Max(mx, float64(x))
		}
		var sum float64
		for _, x := range row {
			sum += math.Exp(float64(x) - mx)
		}
		want += mx + math.Log(sum) - float64(row[ids[s+1]])
	}
	if math.Abs(got-want) > 1e-5*want {
		t.Errorf("NLL %.7g, float64 log-softmax %.7g", got, want)
	}
}
