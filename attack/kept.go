package attack

import (
	"errors"
	"os"
)

// KeptByIndex reads a results file (RunOptions.CSV): for each example index,
// whether the example kept its label under attack (result Failed), the
// per-example outcome that paired comparisons of two models or two attacks
// on the same examples need. A missing file gives nil.
func KeptByIndex(path string) (map[int]bool, error) {
	rs, _, err := ReadCSV(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	kept := make(map[int]bool, len(rs))
	for _, r := range rs {
		kept[r.Index] = r.Type == Failed
	}
	return kept, nil
}
