package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/jsonl"
	"github.com/textarmor/textarmor/model"
)

// Pair is an original text and its adversarial version to compare.
type Pair struct {
	Index     int // the example's index: the pair's LIME seed is Seed + Index
	Gold      int
	Orig, Adv string
}

// PassOptions configure AgreementPass.
type PassOptions struct {
	Method  string // ig or lime
	K       int    // of the top-k intersection
	Gold    bool   // explain each pair's gold label (else every class)
	Sample  int    // explain a seeded uniform sample of this many pairs (0: all)
	Seed    int64
	Workers int
	// Journal, when set, keeps each pair's scores in this file as they are
	// made; Resume reuses the pairs it holds. ModelDigest (the model's
	// weights digest) is recorded in it, with the other settings.
	Journal     string
	Resume      bool
	ModelDigest string
}

// AgreementPass explains the pairs (or a seeded sample of them) in
// parallel and aggregates their interpretation agreement (FLAT spec §9.2):
// with a journal, an interrupted pass resumes where it stopped, and a
// journal of other settings, or whose texts are not the pairs', is refused.
func AgreementPass(m *model.Model, pairs []Pair, opt PassOptions) (*Agreement, error) {
	if opt.Method != "ig" && opt.Method != "lime" {
		return nil, fmt.Errorf("explain: method %q: want ig or lime", opt.Method)
	}
	label := "all"
	if opt.Gold {
		label = "gold"
	}
	start := time.Now()
	var idx []int
	if opt.Sample > 0 && opt.Sample < len(pairs) {
		idx = dataset.SeededOrder(len(pairs), opt.Sample, opt.Seed)
		slices.Sort(idx)
	} else {
		idx = make([]int, len(pairs))
		for i := range idx {
			idx[i] = i
		}
	}
	scores := make([]PairScore, len(idx))
	todo := make([]int, 0, len(idx))
	var jr *jsonl.Writer
	if opt.Journal != "" {
		h := journalHeader{Model: opt.ModelDigest, Method: opt.Method, K: opt.K, Label: label, Seed: opt.Seed}
		j, done, err := openJournal(opt.Journal, h, opt.Resume)
		if err != nil {
			return nil, err
		}
		defer j.Close()
		jr = j
		for k, i := range idx {
			r := pairs[i]
			l, ok := done[r.Index]
			switch {
			case !ok:
				todo = append(todo, k)
			case l.Texts != pairDigest(r.Orig, r.Adv):
				return nil, fmt.Errorf("%s: example %d's texts are not the attack's (the CSV was remade?): remove the journal to explain afresh", opt.Journal, r.Index)
			default:
				scores[k] = l.PairScore
			}
		}
	} else {
		for k := range idx {
			todo = append(todo, k)
		}
	}
	// Attributions only read the model, so the pairs run in parallel.
	var wg sync.WaitGroup
	var failed sync.Once
	var firstErr error
	next := make(chan int)
	stop := make(chan struct{})
	for w := 0; w < max(opt.Workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				r := pairs[idx[j]]
				var classes []int // nil: every class
				if opt.Gold {
					classes = []int{r.Gold}
				}
				s, err := ScorePair(m, opt.Method, opt.K, r.Orig, r.Adv, opt.Seed+int64(r.Index), classes)
				s.Gold = r.Gold
				if err == nil && jr != nil {
					if werr := jr.Write(journalLine{Index: r.Index, Texts: pairDigest(r.Orig, r.Adv), PairScore: s}); werr != nil {
						err = fmt.Errorf("%s: %w", opt.Journal, werr)
					}
				}
				if err != nil {
					failed.Do(func() { firstErr = err; close(stop) })
				}
				scores[j] = s
			}
		}()
	}
feed:
	for _, j := range todo {
		select {
		case next <- j:
		case <-stop:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	a := Aggregate(scores, opt.Gold)
	a.Method, a.K, a.Label = opt.Method, opt.K, label
	if len(idx) < len(pairs) {
		a.SampledFrom = len(pairs)
	}
	a.Seconds = time.Since(start).Seconds()
	return a, nil
}

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
	Index int    `json:"index"`
	Texts string `json:"texts"` // pairDigest of the original and adversarial text
	PairScore
}

func pairDigest(orig, adv string) string {
	h := fnv.New64a()
	io.WriteString(h, orig)
	h.Write([]byte{0})
	io.WriteString(h, adv)
	return fmt.Sprintf("%016x", h.Sum64())
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
