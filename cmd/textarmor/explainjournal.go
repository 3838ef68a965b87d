package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/internal/jsonl"
)

// The explain journal keeps each explained pair's scores beside the attack
// CSV (CSV + ".explain-METHOD-LABEL.jsonl"), one JSON line per pair with an
// fsync after each, so that an interrupted --explain pass resumes where it
// stopped: on 10,000 IMDB reviews the IG pass alone takes hours.
//
// A pair's scores depend only on the model, the method, k, the label mode,
// the run's seed (each pair is explained with seed + its example index) and
// the two texts, so the first line records the first five and every pair
// line a digest of its texts. A journal made under other settings is
// refused rather than mixed in.

// journalHeader is the journal's first line.
type journalHeader struct {
	Journal string `json:"journal"` // "textarmor-explain"
	Version int    `json:"version"`
	Model   string `json:"model_sha256"`
	Method  string `json:"method"`
	K       int    `json:"k"`
	Label   string `json:"label"`
	Seed    int64  `json:"seed"`
}

const journalKind, journalVersion = "textarmor-explain", 1

// journalLine is one explained pair.
type journalLine struct {
	Index     int     `json:"index"`
	Texts     string  `json:"texts"` // pairDigest of the original and adversarial text
	Gold      int     `json:"gold"`
	Tau       float64 `json:"tau"`
	TI        float64 `json:"ti"`
	TauOK     bool    `json:"tau_ok"`
	Undefined int     `json:"tau_undefined"`
	Mismatch  bool    `json:"length_mismatch"`
	Explained bool    `json:"explained"`
}

func pairDigest(orig, adv string) string {
	h := fnv.New64a()
	io.WriteString(h, orig)
	h.Write([]byte{0})
	io.WriteString(h, adv)
	return fmt.Sprintf("%016x", h.Sum64())
}

func (l journalLine) score() explain.PairScore {
	return explain.PairScore{Gold: l.Gold, Tau: l.Tau, TI: l.TI, TauOK: l.TauOK, Undefined: l.Undefined, Mismatch: l.Mismatch, Explained: l.Explained}
}

// journalPath names the journal of an attack CSV for these settings; the
// method and label mode are in the name so that ig and lime (or all and
// gold) runs on one CSV keep separate journals.
func (e *explainFlags) journalPath(csvPath string) string {
	return fmt.Sprintf("%s.explain-%s-%s.jsonl", csvPath, e.method, e.labelMode())
}

// openJournal opens (resume) or creates the journal at path and returns
// the pairs it already holds, keyed by example index. A torn last line (a
// write cut off by a stop) is dropped; any other unreadable line, or a
// header of other settings, is an error naming the file and line.
func openJournal(path string, want journalHeader, resume bool) (*jsonl.Writer, map[int]journalLine, error) {
	want.Journal, want.Version = journalKind, journalVersion
	done := map[int]journalLine{}
	good := int64(0)
	if resume {
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, nil, err
		default:
			if good, err = readJournal(path, data, want, done); err != nil {
				return nil, nil, err
			}
		}
	}
	j, err := jsonl.Open(path, good, want)
	if err != nil {
		return nil, nil, err
	}
	return j, done, nil
}

// readJournal parses data into done and returns the length of its complete
// lines (0 when not even the header is complete).
func readJournal(path string, data []byte, want journalHeader, done map[int]journalLine) (int64, error) {
	return jsonl.Scan(data, func(line int, raw []byte) error {
		if line == 1 {
			var h journalHeader
			if err := strictUnmarshal(raw, &h); err != nil || h.Journal != journalKind {
				return fmt.Errorf("%s:1: not an explain journal (remove it to explain afresh)", path)
			}
			if h != want {
				return fmt.Errorf("%s:1: made with other settings (%+v) than this run's (%+v): remove it to explain afresh", path, h, want)
			}
			return nil
		}
		var l journalLine
		if err := strictUnmarshal(raw, &l); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
		done[l.Index] = l
		return nil
	})
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}
