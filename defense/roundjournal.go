package defense

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/jsonl"
	"github.com/textarmor/textarmor/model"
)

// A round's attack on IMDB with an LSTM runs for hours, longer than a
// session between interruptions, so each finished example goes to
// OUT.roundR.attack.jsonl and a resumed run attacks only the rest. The
// file's first line names the attacked model's weights: a log written
// against other weights is discarded, never mixed in.

// roundJournalHeader is the first line of a round's attack log.
type roundJournalHeader struct {
	Round   int    `json:"round"`
	N       int    `json:"n"`
	Seed    int64  `json:"seed"`
	Weights string `json:"weights_sha256"`
}

// roundJournalEntry is one attacked example: the text the round trains on.
type roundJournalEntry struct {
	Index int               `json:"index"`
	Type  attack.ResultType `json:"type"`
	Text  string            `json:"text"`
}

// RoundJournalPath is where round round of the run writing out keeps its
// attack journal.
func RoundJournalPath(out string, round int) string {
	return fmt.Sprintf("%s.round%d.attack.jsonl", out, round)
}

// errOtherRun marks a log whose header is not this run's (other weights,
// round, sample or seed).
var errOtherRun = errors.New("made by another run")

// readRoundJournal returns the entries of a log whose header equals want and
// the byte length of its complete lines. A last line cut short by an
// interrupted write is dropped; any other bad line is an error naming the
// file and line. ok is false when the file is missing; a log of another
// run is errOtherRun.
func readRoundJournal(path string, want roundJournalHeader) (entries map[int]roundJournalEntry, good int64, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	entries = map[int]roundJournalEntry{}
	good, err = jsonl.Scan(data, func(line int, raw []byte) error {
		if line == 1 {
			var h roundJournalHeader
			if json.Unmarshal(raw, &h) != nil || h != want {
				return fmt.Errorf("%s: %w", path, errOtherRun)
			}
			return nil
		}
		var e roundJournalEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if e.Index < 0 || e.Index >= want.N {
			return fmt.Errorf("%s:%d: example index %d outside the round's %d", path, line, e.Index, want.N)
		}
		entries[e.Index] = e
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	return entries, good, good > 0, nil
}

// openRoundJournal opens a round's attack log for appending. With resume it
// keeps the entries of a matching log (returned); otherwise, or when the
// log belongs to another run (stale), it starts a new one.
func openRoundJournal(path string, hdr roundJournalHeader, resume bool) (lg *jsonl.Writer, prev map[int]roundJournalEntry, stale bool, err error) {
	if resume {
		entries, good, ok, err := readRoundJournal(path, hdr)
		stale = errors.Is(err, errOtherRun)
		if err != nil && !stale {
			return nil, nil, false, err
		}
		if ok {
			if lg, err = jsonl.Open(path, good, nil); err != nil {
				return nil, nil, false, err
			}
			return lg, entries, false, nil
		}
	}
	lg, err = jsonl.Open(path, 0, hdr)
	if err != nil {
		return nil, nil, false, err
	}
	return lg, nil, stale, nil
}

// JournalOptions configure JournaledAttacker.
type JournalOptions struct {
	Out      string    // the model directory being trained: journals go beside it
	Resume   bool      // keep the examples a matching journal holds
	Seed     int64     // round r's attack is seeded with Seed + r
	Workers  int       // examples attacked at once
	Progress io.Writer // the attack's progress line, or nil
	Log      io.Writer // one summary line per round, or nil
	// Interrupt, when set, is called after each newly attacked example of
	// a round with the number logged so far; true stops the round as a
	// kill would (tests; a caller bounding a round's time).
	Interrupt func(round, logged int) bool
}

// ErrRoundInterrupted is returned when JournalOptions.Interrupt stopped a
// round.
var ErrRoundInterrupted = errors.New("round attack stopped")

// JournaledAttacker returns an Attacker for AdversarialRounds that attacks
// each round's sample with a and journals every finished example to
// RoundJournalPath (fsynced), so that a killed round resumes with the
// examples not yet attacked. A round's texts are those it trains on: the
// adversarial text of a successful attack, the final partially perturbed
// text of a failed one, the original of a skipped one (spec flat.md
// §4.1). The previous round's journal is removed when a round starts; call
// RemoveRoundJournals after the last.
func JournaledAttacker(a *attack.Attack, opt JournalOptions) Attacker {
	return func(cur *model.Model, ex []dataset.Example, round int) ([]string, error) {
		// The previous round's journal is no longer needed: its phase is checkpointed.
		os.Remove(RoundJournalPath(opt.Out, round-1))
		return roundAttack(a, cur, attack.ExamplesOf(ex, nil), round, opt)
	}
}

// RemoveRoundJournals removes the journals of rounds 1..rounds of out.
func RemoveRoundJournals(out string, rounds int) {
	for r := 1; r <= rounds; r++ {
		os.Remove(RoundJournalPath(out, r))
	}
}

func roundAttack(a *attack.Attack, cur *model.Model, items []attack.Example, round int, opt JournalOptions) ([]string, error) {
	seed, workers, out, resume, progress := opt.Seed+int64(round), opt.Workers, opt.Out, opt.Resume, opt.Progress
	stderr := opt.Log
	if stderr == nil {
		stderr = io.Discard
	}
	path := RoundJournalPath(out, round)
	digest, err := cur.WeightsDigest()
	if err != nil {
		return nil, err
	}
	hdr := roundJournalHeader{Round: round, N: len(items), Seed: seed, Weights: digest}
	lg, prev, stale, err := openRoundJournal(path, hdr, resume)
	if err != nil {
		return nil, err
	}
	defer lg.Close()
	if stale {
		fmt.Fprintf(stderr, "round %d attack: %s was made by another run (other weights, sample or seed): attacking the round anew\n", round, path)
	}
	var todo []attack.Example
	for _, it := range items {
		if _, ok := prev[it.Index]; !ok {
			todo = append(todo, it)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var writeErr error
	logged := len(prev)
	ro := attack.RunOptions{Workers: workers, Seed: seed, Progress: progress, OnResult: func(r attack.Result) {
		if writeErr != nil {
			return
		}
		text := r.PerturbedText
		if r.FinalText != "" {
			text = r.FinalText
		}
		if writeErr = lg.Write(roundJournalEntry{Index: r.Index, Type: r.Type, Text: text}); writeErr != nil {
			cancel()
			return
		}
		logged++
		if opt.Interrupt != nil && opt.Interrupt(round, logged) {
			writeErr = ErrRoundInterrupted
			cancel()
		}
	}}
	if _, err := attack.RunAll(ctx, a, attack.FromModel(cur), todo, ro); err != nil && writeErr == nil {
		return nil, err
	}
	if writeErr != nil {
		return nil, fmt.Errorf("%s: %w", path, writeErr)
	}
	// The texts come from the log in both cases, so a resumed round trains
	// on exactly what an uninterrupted one would (JSON-escaped the same way).
	all, _, ok, err := readRoundJournal(path, hdr)
	if err != nil {
		return nil, err
	}
	if !ok || len(all) != len(items) {
		return nil, fmt.Errorf("%s: %d of %d examples logged", path, len(all), len(items))
	}
	texts := make([]string, len(items))
	types := make([]attack.Result, len(items))
	for i, it := range items {
		texts[i], types[i].Type = all[it.Index].Text, all[it.Index].Type
	}
	s := attack.Summarize(types)
	resumed := ""
	if len(prev) > 0 {
		resumed = fmt.Sprintf(" (%d resumed from %s)", len(prev), path)
	}
	fmt.Fprintf(stderr, "round %d attack: %d examples, %d successful / %d failed / %d skipped, accuracy under attack %.4f%s\n",
		round, s.N, s.Successful, s.Failed, s.Skipped, s.AccuracyUnderAttack, resumed)
	return texts, nil
}
