package attack

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/textarmor/textarmor/checkpoint"

	"github.com/textarmor/textarmor/internal/progress"
	"github.com/textarmor/textarmor/tensor"
)

// Columns is the CSV header: TextAttack's column names, then ours.
// num_queries counts the distinct inputs the model scored;
// num_queries_with_repeats every input scored for the search, cache hits
// included, which is what TextAttack's num_queries counts.
var Columns = []string{"original_text", "perturbed_text", "original_output", "perturbed_output",
	"ground_truth_output", "num_queries", "result_type", "index", "seconds", "num_words", "num_perturbed", "num_queries_with_repeats"}

// RunOptions control RunAll.
type RunOptions struct {
	Workers int   // examples attacked at once (default 1)
	Seed    int64 // with the example index, seeds each example
	// CSV is the per-example results file: one row per finished example,
	// appended and fsynced, in input order. "" writes none.
	CSV string
	// Resume keeps the rows already in CSV and attacks only the examples
	// whose index is not there (their Results lack FinalText, which the CSV
	// does not hold). Without Resume an existing CSV is replaced.
	Resume bool
	// Progress receives a progress line (stderr); nil for none.
	Progress io.Writer
	// OnResult is called with each result in input order (after its row is
	// written).
	OnResult func(Result)
	// MergeBatches merges the full-forward Predict calls of the workers'
	// examples into one call of the victim (see mergingVictim); the results
	// are the same. A Target.Texts victim batches its own requests and is
	// not merged.
	MergeBatches bool
	// Identity, when set with CSV, records what the results file belongs
	// to (model digest, recipe, protocol, seed, sample…) in CSV+".run.json";
	// a resume whose Identity differs in any field, or of a file without
	// that record, is refused naming the field, so that rows of two runs
	// never mix.
	Identity map[string]string
}

// checkIdentity compares the record of the run that wrote a results file
// being resumed with id.
func checkIdentity(csvPath string, id map[string]string) error {
	path := csvPath + ".run.json"
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot resume %s: it has no record of the run that wrote it (%v); remove it to start afresh", csvPath, err)
	}
	var saved map[string]string
	if err := json.Unmarshal(raw, &saved); err != nil {
		return fmt.Errorf("cannot resume %s: %s: %w", csvPath, path, err)
	}
	keys := slices.Sorted(maps.Keys(id))
	for _, k := range slices.Sorted(maps.Keys(saved)) {
		if _, ok := id[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if saved[k] != id[k] {
			return fmt.Errorf("cannot resume %s: it was written with %s %q, this run has %q; give the same settings, or remove it to start afresh",
				csvPath, k, saved[k], id[k])
		}
	}
	return nil
}

// writeIdentity records id beside a results file started afresh.
func writeIdentity(csvPath string, id map[string]string) error {
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	return checkpoint.WriteFileAtomic(csvPath+".run.json", append(b, '\n'), 0o644)
}

// Summary aggregates results as TextAttack does.
type Summary struct {
	N          int `json:"n"`
	Successful int `json:"successful"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	// OriginalAccuracy = (n − skipped) / n.
	OriginalAccuracy float64 `json:"original_accuracy"`
	// AccuracyUnderAttack = failed / n.
	AccuracyUnderAttack float64 `json:"accuracy_under_attack"`
	// AttackSuccessRate = successful / (successful + failed).
	AttackSuccessRate float64 `json:"attack_success_rate"`
	// AvgPerturbedWordPct is the mean perturbed-word % over successful attacks.
	AvgPerturbedWordPct float64 `json:"avg_perturbed_word_pct"`
	// AvgQueries is the mean number of distinct inputs the model scored,
	// over non-skipped examples; AvgQueriesWithRepeats counts repeats too
	// (TextAttack's "Avg num queries").
	AvgQueries            float64 `json:"avg_queries"`
	AvgQueriesWithRepeats float64 `json:"avg_queries_with_repeats"`
	AvgWords              float64 `json:"avg_num_words"`
	// Seconds is the summed per-example attack time (resumed rows included);
	// SecondsPerExample divides it by n.
	Seconds           float64 `json:"seconds"`
	SecondsPerExample float64 `json:"seconds_per_example"`
	// Verified counts the successful attacks whose written text, read back
	// by the model, fools it as claimed; Mismatched those that do not (an
	// attack that scored a text other than the one it wrote: a bug). Both
	// are 0 for results never read back (CheckResults).
	Verified   int `json:"verified"`
	Mismatched int `json:"mismatched"`
	// PostPass is, per post-transformation constraint (by position in
	// Attack.Post), how many substituted texts it judged and kept over
	// the results that carry counts (those attacked in this run, not
	// rows resumed from a CSV): how strict each check is.
	PostPass []ConstraintPass `json:"post_pass,omitempty"`
}

// ConstraintPass is one constraint's tally.
type ConstraintPass struct {
	Checked int `json:"checked"`
	Passed  int `json:"passed"`
}

// Summarize computes the summary of a set of results.
func Summarize(rs []Result) Summary {
	var s Summary
	var pct, q, qr, words float64
	s.N = len(rs)
	for _, r := range rs {
		s.Seconds += r.Seconds
		words += float64(r.NumWords)
		for k := range r.PostChecked {
			if k >= len(s.PostPass) {
				s.PostPass = append(s.PostPass, make([]ConstraintPass, k+1-len(s.PostPass))...)
			}
			s.PostPass[k].Checked += r.PostChecked[k]
			s.PostPass[k].Passed += r.PostPassed[k]
		}
		switch r.Type {
		case Successful:
			s.Successful++
			pct += r.PerturbedPct()
			switch r.Check {
			case Verified:
				s.Verified++
			case Mismatch:
				s.Mismatched++
			}
		case Failed:
			s.Failed++
		case Skipped:
			s.Skipped++
			continue
		}
		q += float64(r.NumQueries)
		qr += float64(r.NumRequests)
	}
	if s.N > 0 {
		n := float64(s.N)
		s.OriginalAccuracy = float64(s.N-s.Skipped) / n
		s.AccuracyUnderAttack = float64(s.Failed) / n
		s.AvgWords = words / n
		s.SecondsPerExample = s.Seconds / n
	}
	if a := s.Successful + s.Failed; a > 0 {
		s.AttackSuccessRate = float64(s.Successful) / float64(a)
		s.AvgQueries, s.AvgQueriesWithRepeats = q/float64(a), qr/float64(a)
	}
	if s.Successful > 0 {
		s.AvgPerturbedWordPct = pct / float64(s.Successful)
	}
	return s
}

func (r Result) row() []string {
	return []string{r.OriginalText, r.PerturbedText, strconv.Itoa(r.OriginalOutput), strconv.Itoa(r.PerturbedOutput),
		strconv.Itoa(r.GroundTruth), strconv.Itoa(r.NumQueries), string(r.Type), strconv.Itoa(r.Index),
		strconv.FormatFloat(r.Seconds, 'f', 4, 64), strconv.Itoa(r.NumWords), strconv.Itoa(r.NumPerturbed), strconv.Itoa(r.NumRequests)}
}

func parseRow(rec []string) (Result, error) {
	if len(rec) != len(Columns) {
		return Result{}, fmt.Errorf("%d fields, want %d", len(rec), len(Columns))
	}
	var r Result
	var err error
	ints := []*int{&r.OriginalOutput, &r.PerturbedOutput, &r.GroundTruth, &r.NumQueries}
	for k, p := range ints {
		if *p, err = strconv.Atoi(rec[2+k]); err != nil {
			return r, fmt.Errorf("%s: %w", Columns[2+k], err)
		}
	}
	r.OriginalText, r.PerturbedText, r.Type = rec[0], rec[1], ResultType(rec[6])
	switch r.Type {
	case Successful, Failed, Skipped:
	default:
		return r, fmt.Errorf("result_type %q", rec[6])
	}
	for k, p := range []*int{&r.Index, nil, &r.NumWords, &r.NumPerturbed, &r.NumRequests} {
		if p == nil {
			continue
		}
		if *p, err = strconv.Atoi(rec[7+k]); err != nil {
			return r, fmt.Errorf("%s: %w", Columns[7+k], err)
		}
	}
	if r.Seconds, err = strconv.ParseFloat(rec[8], 64); err != nil {
		return r, fmt.Errorf("seconds: %w", err)
	}
	return r, nil
}

// ReadCSV reads a results file written by RunAll. A last row cut short by
// an interrupted write is dropped and reported through its offset: good is
// the byte length of the complete rows (header included).
func ReadCSV(path string) (rs []Result, good int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: header: %w", path, err)
	}
	if len(header) == len(Columns)-1 && slices.Equal(header, Columns[:len(header)]) {
		return nil, 0, fmt.Errorf("%s: written by an older textarmor (no %s column); attack again into a new file", path, Columns[len(header)])
	}
	if len(header) != len(Columns) {
		return nil, 0, fmt.Errorf("%s: not an attack results file (header %v)", path, header)
	}
	for i, c := range Columns {
		if header[i] != c {
			return nil, 0, fmt.Errorf("%s: not an attack results file (column %d is %q, want %q)", path, i+1, header[i], c)
		}
	}
	good = cr.InputOffset()
	var before int64 // good before the last row read
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			// Rows are written with their newline: a last row without one
			// was cut before it (its final field may be cut too), and an
			// append would glue the next row onto it.
			if len(rs) > 0 && !endsInNewline(f, good) {
				return rs[:len(rs)-1], before, nil
			}
			return rs, good, nil
		}
		var r Result
		if err == nil {
			r, err = parseRow(rec)
		}
		if err != nil {
			// The bad row's line, before reading on moves FieldPos to the
			// next row; a CSV syntax error carries its own.
			var line int
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			} else {
				line, _ = cr.FieldPos(0)
			}
			// Only the last row may be damaged (an interrupted append).
			if _, err2 := cr.Read(); err2 == io.EOF {
				return rs, good, nil
			}
			return nil, 0, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rs = append(rs, r)
		before, good = good, cr.InputOffset()
	}
}

// endsInNewline reports whether byte end−1 of f is a newline.
func endsInNewline(f *os.File, end int64) bool {
	var b [1]byte
	_, err := f.ReadAt(b[:], end-1)
	return err == nil && b[0] == '\n'
}

// csvSink appends rows with an fsync after each.
type csvSink struct {
	f *os.File
	w *csv.Writer
}

// openSink opens the results file at path: with resume, after the rows it
// holds (returned; they must belong to the run id names, when id is set);
// otherwise afresh, recording id beside it.
func openSink(path string, resume bool, id map[string]string) (*csvSink, []Result, error) {
	var prev []Result
	if resume {
		rs, good, err := ReadCSV(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			resume = false
		case err != nil:
			return nil, nil, err
		default:
			prev = rs
			if id != nil && len(rs) > 0 {
				if err := checkIdentity(path, id); err != nil {
					return nil, nil, err
				}
			}
			if good == 0 {
				resume = false
			} else if err := os.Truncate(path, good); err != nil {
				return nil, nil, err
			}
		}
	}
	if id != nil && len(prev) == 0 {
		if err := writeIdentity(path, id); err != nil {
			return nil, nil, err
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !resume {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if err != nil {
		return nil, nil, err
	}
	s := &csvSink{f: f, w: csv.NewWriter(f)}
	if !resume {
		if err := s.write(Columns); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return s, prev, nil
}

func (s *csvSink) write(rec []string) error {
	if err := s.w.Write(rec); err != nil {
		return err
	}
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	return s.f.Sync()
}

// RunAll attacks examples with opt.Workers workers and returns the results
// of all examples in input order (rows resumed from opt.CSV included). The
// results do not depend on the number of workers. Cancelling ctx stops
// handing out examples; finished ones are kept in the CSV and the error is
// ctx's.
func RunAll(ctx context.Context, a *Attack, t Target, ex []Example, opt RunOptions) ([]Result, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	for _, e := range ex {
		if e.Fixed != "" && t.EncodePair == nil {
			return nil, fmt.Errorf("attack: example %d is a sentence pair, and the victim does not read pairs (Target.EncodePair)", e.Index)
		}
	}
	done := map[int]Result{}
	var sink *csvSink
	if opt.CSV != "" {
		s, prev, err := openSink(opt.CSV, opt.Resume, opt.Identity)
		if err != nil {
			return nil, err
		}
		defer s.f.Close()
		sink = s
		for _, r := range prev {
			done[r.Index] = r
		}
	}
	out := make([]Result, len(ex))
	var todo []int
	for k, e := range ex {
		if r, ok := done[e.Index]; ok {
			r.Fixed = e.Fixed // not in the CSV
			out[k] = r
		} else {
			todo = append(todo, k)
		}
	}
	workers := max(opt.Workers, 1)
	if workers > 1 {
		// Each worker makes its own BLAS calls: a threaded BLAS under them
		// oversubscribes the cores (measured: OpenBLAS's spinning threads
		// cost a BiLSTM GA 37 % more wall time).
		defer tensor.SingleThreadedBLAS()()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	type item struct {
		k   int
		r   Result
		err error
	}
	results := make(chan item)
	read := t // the target as given, for reading the written texts back
	var merger *mergingVictim
	if opt.MergeBatches && workers > 1 && t.Texts == nil {
		t, merger = mergeTarget(t, workers)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if merger != nil {
				defer merger.leave()
			}
			for k := range jobs {
				r, err := a.Run(t, ex[k], opt.Seed)
				if err == nil {
					// A result scored by a failed text victim is not kept.
					err = t.victimErr()
				}
				results <- item{k, r, err}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, k := range todo {
			select {
			case jobs <- k:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	// Emit in input order: hold results until all earlier ones are in.
	ready := map[int]Result{}
	next, nDone, start := 0, 0, time.Now()
	bar := progress.New(opt.Progress)
	var firstErr error
	for it := range results {
		if it.err != nil {
			if firstErr == nil {
				firstErr = it.err
				cancel()
			}
			continue
		}
		ready[it.k] = it.r
		nDone++
		for next < len(todo) {
			r, ok := ready[todo[next]]
			if !ok {
				break
			}
			delete(ready, todo[next])
			out[todo[next]] = r
			next++
			if firstErr != nil {
				continue
			}
			if sink != nil {
				if err := sink.write(r.row()); err != nil {
					firstErr = err
					cancel()
					continue
				}
			}
			if opt.OnResult != nil {
				opt.OnResult(r)
			}
		}
		bar.Show("%s", progressLine(len(ex)-len(todo)+nDone, len(ex), nDone, len(todo), time.Since(start)))
	}
	bar.End()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := context.Cause(ctx); err != nil && next < len(todo) {
		return nil, err
	}
	CheckResults(a.Goal, read, out)
	if err := read.victimErr(); err != nil {
		return nil, err
	}
	return out, nil
}

// progressLine reports the examples finished (resumed ones included), the
// time this run has taken and, from this run's own rate, the time left.
func progressLine(finished, total, doneHere, todoHere int, elapsed time.Duration) string {
	line := fmt.Sprintf("attacked %d/%d (%.1fs", finished, total, elapsed.Seconds())
	if doneHere > 0 && doneHere < todoHere {
		left := time.Duration(float64(elapsed) / float64(doneHere) * float64(todoHere-doneHere))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	return line + ")"
}
