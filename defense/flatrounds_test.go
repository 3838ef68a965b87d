package defense

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// maskedCNN is a small CNN with a word mask over the training vocabulary.
func maskedCNN(t *testing.T, ds *dataset.Dataset, seed int64) *model.Model {
	t.Helper()
	vocab := train.BuildVocab(mustTok(t), ds.Train, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters, cfg.Mask, cfg.MaskHidden = 16, 8, true, 16
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 50, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// copyFirstWord is a stand-in attack: the second word replaces the first.
func copyFirstWord(_ *model.Model, ex []dataset.Example, _ int) ([]string, error) {
	out := make([]string, len(ex))
	for i, e := range ex {
		w := strings.Fields(e.Text)
		if len(w) > 1 {
			w[0] = w[1]
		}
		out[i] = strings.Join(w, " ")
	}
	return out, nil
}

func TestAdversarialRoundsFLAT(t *testing.T) {
	ds := synth.SentimentDataset(300, 60, 0, 1)
	m := maskedCNN(t, ds, 1)
	f, _ := NewFLAT(DefaultFLATBeta, DefaultFLATGamma)
	out := filepath.Join(t.TempDir(), "m")
	res, err := AdversarialRounds(m, f, ds.Train, ds.Dev, copyFirstWord, RoundsOptions{CleanEpochs: 6, Rounds: 2, RoundEpochs: 2,
		PerRound: 100, Train: train.Options{Out: out, LR: 0.01, Seed: 1}, KeepRounds: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 2 || res.Rounds[0].Changed == 0 || res.Rounds[0].GapPairs == 0 {
		t.Fatalf("rounds %+v", res.Rounds)
	}
	// The stand-in attack substitutes position 0 only: every changed pair
	// counts its first word and its second (now at position 0) once each.
	total := 0
	for _, c := range res.Substitutions {
		total += c
	}
	if total != 2*(res.Rounds[0].Changed+res.Rounds[1].Changed) {
		t.Fatalf("substitution counts sum to %d, want 2 × %d changed texts", total, res.Rounds[0].Changed+res.Rounds[1].Changed)
	}
	best, err := model.Load(out)
	if err != nil || best.Net.Mask == nil {
		t.Fatalf("saved model: %v", err)
	}
	for r := 1; r <= 2; r++ {
		if _, err := model.Load(fmt.Sprintf("%s.round%d", out, r)); err != nil {
			t.Fatalf("kept round %d: %v", r, err)
		}
	}
	if _, err := os.Stat(out + ".clean"); !os.IsNotExist(err) {
		t.Fatalf("clean-phase model left behind: %v", err)
	}
	if res.BestDevAcc < 0.7 {
		t.Errorf("best dev accuracy %.3f", res.BestDevAcc)
	}
}

func mustTok(t *testing.T) text.Tokenizer {
	tok, err := text.NewTokenizer("whitespace")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAdversarialRoundsResume(t *testing.T) {
	ds := synth.SentimentDataset(200, 60, 0, 2)
	newModel := func() *model.Model { return maskedCNN(t, ds, 1) }
	var calls []int
	failAt := 0
	atk := func(_ *model.Model, ex []dataset.Example, round int) ([]string, error) {
		calls = append(calls, round)
		if round == failAt {
			return nil, errors.New("killed")
		}
		out := make([]string, len(ex))
		for i, e := range ex {
			w := strings.Fields(e.Text)
			if len(w) > 2 {
				w[round%2], w[2] = w[2], w[round%2]
			}
			out[i] = strings.Join(w, " ")
		}
		return out, nil
	}
	run := func(m *model.Model, out string, resume bool) (*RoundsResult, error) {
		f, _ := NewFLAT(DefaultFLATBeta, DefaultFLATGamma)
		return AdversarialRounds(m, f, ds.Train, ds.Dev, atk, RoundsOptions{CleanEpochs: 2, Rounds: 3, RoundEpochs: 1,
			PerRound: 50, Train: train.Options{Out: out, LR: 0.01, Seed: 1, Resume: resume}})
	}
	whole := newModel()
	want, err := run(whole, filepath.Join(t.TempDir(), "m"), false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m")
	failAt = 3
	if _, err := run(newModel(), out, false); err == nil {
		t.Fatal("the interrupted run did not fail")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("an interrupted run left a model at OUT, where it looks finished: %v", err)
	}
	other, _ := NewFLAT(DefaultFLATBeta, 0)
	if _, err := AdversarialRounds(newModel(), other, ds.Train, ds.Dev, atk, RoundsOptions{CleanEpochs: 2, Rounds: 3, RoundEpochs: 1,
		PerRound: 50, Train: train.Options{Out: out, LR: 0.01, Seed: 1, Resume: true}}); err == nil || !strings.Contains(err.Error(), "settings") {
		t.Fatalf("resuming with another gamma: %v, want a settings error", err)
	}
	failAt, calls = 0, nil
	m := newModel()
	got, err := run(m, out, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(calls, []int{3}) {
		t.Fatalf("resumed run attacked in rounds %v, want only round 3", calls)
	}
	if got.BestRound != want.BestRound || got.BestDevAcc != want.BestDevAcc || len(got.Rounds) != 3 || len(got.RoundRuns) != 3 {
		t.Fatalf("resumed %+v, uninterrupted %+v", got, want)
	}
	for i, p := range whole.Net.Params() {
		q := m.Net.Params()[i]
		for j := range p.Value.Data {
			if p.Value.Data[j] != q.Value.Data[j] {
				t.Fatalf("param %s differs after resuming", p.Name)
			}
		}
	}
	if _, err := os.Stat(out + ".rounds.ckpt"); !os.IsNotExist(err) {
		t.Fatalf("checkpoint left after a finished run: %v", err)
	}
}

// Spec check 6: with the masks disabled (φ ≡ 1) and β = γ = 0, the FLAT
// code path trains exactly the parameters of the -adv path (plain
// cross-entropy through the same rounds) from the same seed.
func TestFLATReducesToAdv(t *testing.T) {
	ds := synth.SentimentDataset(120, 40, 0, 3)
	vocab := train.BuildVocab(mustTok(t), ds.Train, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 12, 6
	atk := func(_ *model.Model, ex []dataset.Example, round int) ([]string, error) {
		out := make([]string, len(ex))
		for i, e := range ex {
			w := strings.Fields(e.Text)
			if len(w) > 2 {
				w[round%2] = w[2]
			}
			out[i] = strings.Join(w, " ")
		}
		return out, nil
	}
	run := func(obj train.Objective) *model.Model {
		m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 50, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(4)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = AdversarialRounds(m, obj, ds.Train, ds.Dev, atk, RoundsOptions{CleanEpochs: 1, Rounds: 2, RoundEpochs: 1,
			PerRound: 60, Train: train.Options{Out: filepath.Join(t.TempDir(), "m"), LR: 0.01, Seed: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	f, _ := NewFLAT(0, 0)
	flat, adv := run(f), run(train.Standard{})
	moved := false
	init, _ := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 50, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(4)))
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
	// Nonzero weights on a model without a mask are refused.
	g, _ := NewFLAT(DefaultFLATBeta, 0)
	m, _ := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 50, Classes: ds.Classes}, vocab, rand.New(rand.NewSource(4)))
	if _, err := AdversarialRounds(m, g, ds.Train, ds.Dev, atk, RoundsOptions{CleanEpochs: 1, Rounds: 1, RoundEpochs: 1,
		Train: train.Options{Out: filepath.Join(t.TempDir(), "m"), Seed: 5}}); err == nil {
		t.Fatal("FLAT with beta > 0 trained a model without a word mask")
	}
}

// With a strong γ the round's training closes the importance gap on the
// pairs it trains on (spec check 9's mechanism); ImportanceGapAfter
// records it.
func TestRoundsRecordGapAfterTraining(t *testing.T) {
	ds := synth.SentimentDataset(200, 40, 0, 5)
	m := maskedCNN(t, ds, 2)
	f, _ := NewFLAT(0, 1)
	res, err := AdversarialRounds(m, f, ds.Train, ds.Dev, copyFirstWord, RoundsOptions{CleanEpochs: 2, Rounds: 1, RoundEpochs: 3,
		Train: train.Options{Out: filepath.Join(t.TempDir(), "m"), LR: 0.01, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Rounds[0]
	t.Logf("gap before %.4f, after %.4f over %d pairs", st.ImportanceGap, st.ImportanceGapAfter, st.GapPairs)
	if st.GapPairs == 0 || !(st.ImportanceGapAfter < st.ImportanceGap/2) {
		t.Errorf("gap %.4f before and %.4f after training with γ = 1: want it at least halved", st.ImportanceGap, st.ImportanceGapAfter)
	}
}
