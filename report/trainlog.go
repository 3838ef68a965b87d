package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// errEmptyLog is a log with no epoch yet (a run just started).
var errEmptyLog = errors.New("empty training log")

// readTrainLog reads a training log (train.EpochStats as JSON lines). A
// last line with no newline that does not parse is a write cut short and
// is dropped, as the trainer does when it resumes; any other bad line is
// an error naming its line.
func (r *Report) readTrainLog(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var runs [][]Epoch
	prev := 0
	for n, line := range bytes.SplitAfter(data, []byte("\n")) {
		last := !bytes.HasSuffix(line, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var e struct {
			Epoch     *int     `json:"epoch"`
			TrainLoss *float64 `json:"train_loss"`
			TrainAcc  float64  `json:"train_acc"`
			DevAcc    float64  `json:"dev_acc"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			if last {
				break
			}
			return fmt.Errorf("%s:%d: %w", path, n+1, err)
		}
		if e.Epoch == nil || e.TrainLoss == nil {
			return fmt.Errorf("%s:%d: not a training log line (no epoch or train_loss)", path, n+1)
		}
		if err := finite(fmt.Sprintf("%s:%d", path, n+1), "a metric", *e.TrainLoss, e.TrainAcc, e.DevAcc); err != nil {
			return err
		}
		// The log is appended to: a run started afresh counts from 1 again.
		if len(runs) == 0 || *e.Epoch <= prev {
			runs = append(runs, nil)
		}
		prev = *e.Epoch
		runs[len(runs)-1] = append(runs[len(runs)-1], Epoch{Epoch: *e.Epoch, TrainLoss: *e.TrainLoss, TrainAcc: e.TrainAcc, DevAcc: e.DevAcc})
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s: %w", path, errEmptyLog)
	}
	r.Logs = append(r.Logs, TrainLog{Path: path, Runs: runs})
	return nil
}
