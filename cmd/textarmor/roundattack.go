package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/model"
)

// A round's attack on IMDB with an LSTM runs for hours, longer than a
// session between interruptions, so each finished example goes to
// OUT.roundR.attack.jsonl and a resumed run attacks only the rest. The
// file's first line names the attacked model's weights: a log written
// against other weights is discarded, never mixed in.

// roundLogHeader is the first line of a round's attack log.
type roundLogHeader struct {
	Round   int    `json:"round"`
	N       int    `json:"n"`
	Seed    int64  `json:"seed"`
	Weights string `json:"weights_sha256"`
}

// roundLogEntry is one attacked example: the text the round trains on.
type roundLogEntry struct {
	Index int               `json:"index"`
	Type  attack.ResultType `json:"type"`
	Text  string            `json:"text"`
}

func roundLogPath(out string, round int) string {
	return fmt.Sprintf("%s.round%d.attack.jsonl", out, round)
}

// errOtherRun marks a log whose header is not this run's (other weights,
// round, sample or seed).
var errOtherRun = errors.New("made by another run")

// readRoundLog returns the entries of a log whose header equals want and
// the byte length of its complete lines. A last line cut short by an
// interrupted write is dropped; any other bad line is an error naming the
// file and line. ok is false when the file is missing; a log of another
// run is errOtherRun.
func readRoundLog(path string, want roundLogHeader) (entries map[int]roundLogEntry, good int64, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	entries = map[int]roundLogEntry{}
	good, err = scanJSONLines(data, func(line int, raw []byte) error {
		if line == 1 {
			var h roundLogHeader
			if json.Unmarshal(raw, &h) != nil || h != want {
				return fmt.Errorf("%s: %w", path, errOtherRun)
			}
			return nil
		}
		var e roundLogEntry
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

// openRoundLog opens a round's attack log for appending. With resume it
// keeps the entries of a matching log (returned); otherwise, or when the
// log belongs to another run (stale), it starts a new one.
func openRoundLog(path string, hdr roundLogHeader, resume bool) (lg *jsonLinesWriter, prev map[int]roundLogEntry, stale bool, err error) {
	if resume {
		entries, good, ok, err := readRoundLog(path, hdr)
		stale = errors.Is(err, errOtherRun)
		if err != nil && !stale {
			return nil, nil, false, err
		}
		if ok {
			if lg, err = openJSONLines(path, good, nil); err != nil {
				return nil, nil, false, err
			}
			return lg, entries, false, nil
		}
	}
	lg, err = openJSONLines(path, 0, hdr)
	if err != nil {
		return nil, nil, false, err
	}
	return lg, nil, stale, nil
}

// roundAttackStop, when set (tests), is called after each newly attacked
// example of a round with the number logged so far; true interrupts the
// round as a kill would.
var roundAttackStop func(round, logged int) bool

// runRoundAttack attacks a round's sample with the current model and
// returns the texts the round trains on: the adversarial text of a
// successful attack, the final partially perturbed text of a failed one,
// the original of a skipped one (spec flat.md §4.1). Examples already in a
// matching log are not attacked again when resume is set.
func runRoundAttack(a *attack.Attack, cur *model.Model, items []attack.Example, round int, seed int64, workers int,
	out string, resume bool, progress, stderr io.Writer) ([]string, error) {
	path := roundLogPath(out, round)
	digest, err := cur.WeightsDigest()
	if err != nil {
		return nil, err
	}
	hdr := roundLogHeader{Round: round, N: len(items), Seed: seed, Weights: digest}
	lg, prev, stale, err := openRoundLog(path, hdr, resume)
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
		if writeErr = lg.write(roundLogEntry{Index: r.Index, Type: r.Type, Text: text}); writeErr != nil {
			cancel()
			return
		}
		logged++
		if roundAttackStop != nil && roundAttackStop(round, logged) {
			writeErr = errRoundStopped
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
	all, _, ok, err := readRoundLog(path, hdr)
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

var errRoundStopped = errors.New("round attack stopped")
