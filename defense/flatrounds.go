package defense

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/train"
)

// Attacker attacks the current model on examples in round (1-based) and
// returns one text per example (spec §4.1: the successful adversarial
// text, else the attack's final text, else the original). It must depend
// only on its arguments, so that a resumed run repeats an interrupted
// round's attack exactly. The CLI wires attack.RunAll in here.
type Attacker func(m *model.Model, ex []dataset.Example, round int) ([]string, error)

// RoundsOptions configure AdversarialRounds (spec §4.1, §5 defaults).
type RoundsOptions struct {
	CleanEpochs int // 10
	Rounds      int // 4
	RoundEpochs int // 5
	// PerRound is m, the examples attacked per round (0 = all of them).
	PerRound int
	// Train is the base training setup; Epochs is ignored and Out is where
	// the best adversarial-phase model is written when the run finishes.
	Train train.Options
	Log   io.Writer // one line per round; nil for none
	// KeepRounds keeps each round's best-dev model as Out+".roundN" (for
	// per-round robustness measurements); otherwise they are removed.
	KeepRounds bool
}

// RoundStats describe one attack round.
type RoundStats struct {
	Round      int     `json:"round"`
	Attacked   int     `json:"attacked"`
	Changed    int     `json:"changed"` // adversarial texts that differ from their source
	BestDevAcc float64 `json:"best_dev_acc"`
	// ImportanceGap is the mean |φ_w − φ_w'| over this round's word pairs
	// before training on them (masked models only).
	ImportanceGap float64 `json:"importance_gap,omitempty"`
	GapPairs      int     `json:"importance_gap_pairs,omitempty"`
	// ImportanceGapAfter is the same mean after the round's training (the
	// model of its last epoch, which the next round continues from): how
	// far γ closed the gap on the pairs it was trained on (spec check 9).
	ImportanceGapAfter float64 `json:"importance_gap_after,omitempty"`
}

// RoundsResult summarises a run.
type RoundsResult struct {
	Clean      *train.Result `json:"clean"`
	Rounds     []RoundStats  `json:"rounds"`
	BestRound  int           `json:"best_round"`
	BestDevAcc float64       `json:"best_dev_acc"`
	// RoundRuns are the rounds' training runs (per-epoch statistics).
	RoundRuns []*train.Result `json:"-"`
	// Substitutions counts, per word, its occurrences at a substituted
	// position of the adversarial training texts, as original or as
	// replacement, over all rounds: FLAT's SF (spec §9.3).
	Substitutions map[string]int `json:"substitutions,omitempty"`
}

// roundsCheckpoint is what OUT.rounds.ckpt records besides the current
// model and optimizer: the phases completed (0 = clean phase, r = round r)
// and the results so far.
type roundsCheckpoint struct {
	Done      int             `json:"done"`
	Result    *RoundsResult   `json:"result"`
	RoundRuns []*train.Result `json:"round_runs"`
}

// AdversarialRounds runs FLAT's schedule: clean training, then rounds in
// which the current model attacks (a sample of) the training set, the
// outputs join the clean set (replacing the previous round's), and training
// continues. With obj a *FLAT, the (original, adversarial) pairs are
// registered for L_imp; with train.Standard on an unmasked model this is
// the -adv baseline. The best-dev model of the adversarial phase is saved
// to opt.Train.Out. Each phase and round is one train.Run call; they share
// one optimizer, so Adam's state carries over as in the reference.
func AdversarialRounds(m *model.Model, obj train.Objective, trainSet, dev []dataset.Example, atk Attacker, opt RoundsOptions) (*RoundsResult, error) {
	if opt.CleanEpochs == 0 {
		opt.CleanEpochs = 10
	}
	if opt.Rounds == 0 {
		opt.Rounds = 4
	}
	if opt.RoundEpochs == 0 {
		opt.RoundEpochs = 5
	}
	if opt.CleanEpochs < 0 || opt.Rounds < 0 || opt.RoundEpochs < 1 || opt.PerRound < 0 {
		return nil, fmt.Errorf("rounds: clean epochs %d, rounds %d, round epochs %d, per round %d", opt.CleanEpochs, opt.Rounds, opt.RoundEpochs, opt.PerRound)
	}
	if atk == nil {
		return nil, errors.New("rounds: no attacker")
	}
	final := opt.Train.Out
	if final == "" {
		return nil, errors.New("rounds: no output path")
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	if opt.Train.Shared == nil {
		opt.Train.Shared = train.NewOptimizer(opt.Train)
	}
	rng := rand.New(rand.NewSource(opt.Train.Seed + 7))
	clean := train.Encode(m, trainSet)
	devEx := train.Encode(m, dev)
	res := &RoundsResult{BestRound: -1}
	// Between phases the current model, the optimizer and the results go to
	// OUT.rounds.ckpt; with Train.Resume a run continues after the last
	// completed phase (and train.Run resumes within an interrupted one).
	ckpt := final + ".rounds.ckpt"
	// The best round so far waits in OUT.best: a model at OUT means the
	// whole run finished, so scripts may test for it.
	bestSoFar := final + ".best"
	done := -1
	if opt.Train.Resume {
		var rc roundsCheckpoint
		ok, err := train.LoadCheckpoint(ckpt, m, obj, opt.Train.Shared, opt.Train.Seed, &rc)
		if err != nil {
			return nil, err
		}
		if ok {
			done, res = rc.Done, rc.Result
			res.RoundRuns = rc.RoundRuns
			after := "the clean phase"
			if done > 0 {
				after = fmt.Sprintf("round %d", done)
			}
			fmt.Fprintf(log, "resuming from %s after %s\n", ckpt, after)
		}
	} else {
		os.RemoveAll(ckpt)
		os.RemoveAll(bestSoFar)
	}
	phaseDone := func(phase int) error {
		return train.SaveCheckpoint(ckpt, m, obj, opt.Train.Shared, opt.Train.Seed, roundsCheckpoint{Done: phase, Result: res, RoundRuns: res.RoundRuns})
	}
	if opt.CleanEpochs > 0 && done < 0 {
		o := opt.Train
		o.Epochs, o.Out = opt.CleanEpochs, final+".clean"
		if o.LogPath != "" {
			o.LogPath = opt.Train.LogPath + ".clean"
		}
		r, err := train.Run(m, obj, clean, devEx, o)
		if err != nil {
			return nil, fmt.Errorf("clean phase: %w", err)
		}
		res.Clean = r
		os.RemoveAll(o.Out)
		fmt.Fprintf(log, "clean phase: %d epochs, best dev %.4f\n", opt.CleanEpochs, r.BestDevAcc)
		if err := phaseDone(0); err != nil {
			return nil, err
		}
	}
	fl, _ := obj.(*FLAT)
	// A sub-word model's pairs are compared word by word (spec F5), for
	// the importance gap and the substitution counts alike.
	var words *PieceWords
	if m.Pieces != nil {
		words = PieceWordsOf(m.Pieces)
	}
	wordText := func(ids []int32, at []int) string {
		if m.Pieces == nil {
			return m.Vocab.Word(ids[at[0]])
		}
		w := make([]int32, len(at))
		for j, i := range at {
			w[j] = ids[i]
		}
		return m.Pieces.Decode(w)
	}
	for round := 1; round <= opt.Rounds; round++ {
		sample := trainSet
		if opt.PerRound > 0 && opt.PerRound < len(trainSet) {
			sample = make([]dataset.Example, opt.PerRound)
			for i, j := range rng.Perm(len(trainSet))[:opt.PerRound] { // drawn for done rounds too, to keep the stream
				sample[i] = trainSet[j]
			}
		}
		if round <= done {
			continue
		}
		texts, err := atk(m, sample, round)
		if err != nil {
			return nil, fmt.Errorf("round %d attack: %w", round, err)
		}
		if len(texts) != len(sample) {
			return nil, fmt.Errorf("round %d: attacker returned %d texts for %d examples", round, len(texts), len(sample))
		}
		pairs := make([]Pair, len(sample))
		all := append([]train.Example(nil), clean...)
		st := RoundStats{Round: round, Attacked: len(sample)}
		if res.Substitutions == nil {
			res.Substitutions = map[string]int{}
		}
		for i, e := range sample {
			o, a := m.Encode(e.Text), m.Encode(texts[i])
			pairs[i] = Pair{Orig: o, Adv: a}
			if idsKey(o) != idsKey(a) {
				st.Changed++
			}
			ow, aw := words.Substituted(o, a)
			for k := range ow {
				res.Substitutions[wordText(o, ow[k])]++
				res.Substitutions[wordText(a, aw[k])]++
			}
			all = append(all, train.Example{IDs: a, Label: e.Label})
		}
		st.ImportanceGap, st.GapPairs = ImportanceGapWords(m.Net, pairs, words)
		if fl != nil {
			fl.SetPairs(pairs)
		}
		o := opt.Train
		o.Epochs, o.Out = opt.RoundEpochs, fmt.Sprintf("%s.round%d", final, round)
		if o.LogPath != "" {
			o.LogPath = fmt.Sprintf("%s.round%d", opt.Train.LogPath, round)
		}
		o.Seed = opt.Train.Seed + int64(round)
		r, err := train.Run(m, obj, all, devEx, o)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", round, err)
		}
		st.BestDevAcc = r.BestDevAcc
		st.ImportanceGapAfter, _ = ImportanceGapWords(m.Net, pairs, words)
		res.Rounds = append(res.Rounds, st)
		res.RoundRuns = append(res.RoundRuns, r)
		if res.BestRound < 0 || r.BestDevAcc > res.BestDevAcc {
			best, err := model.Load(o.Out)
			if err != nil {
				return nil, err
			}
			if err := best.Save(bestSoFar); err != nil {
				return nil, err
			}
			res.BestRound, res.BestDevAcc = round, r.BestDevAcc
		}
		if !opt.KeepRounds {
			os.RemoveAll(o.Out)
		}
		fmt.Fprintf(log, "round %d: attacked %d, %d changed, importance gap %.4f over %d word pairs (%.4f after training), best dev %.4f\n",
			round, st.Attacked, st.Changed, st.ImportanceGap, st.GapPairs, st.ImportanceGapAfter, r.BestDevAcc)
		if err := phaseDone(round); err != nil {
			return nil, err
		}
	}
	if res.BestRound < 0 { // no rounds: keep the clean-phase model
		if err := m.Save(final); err != nil {
			return nil, err
		}
	} else {
		os.RemoveAll(final)
		if err := os.Rename(bestSoFar, final); err != nil {
			return nil, fmt.Errorf("rounds: %w", err)
		}
	}
	os.RemoveAll(ckpt)
	return res, nil
}
