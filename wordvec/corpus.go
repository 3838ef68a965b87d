package wordvec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLineBytes is the longest corpus line ReadCorpus accepts (16 MiB).
const MaxLineBytes = 16 << 20

// ReadCorpus reads a plain-text corpus, one text per line: each line is
// lower-cased and split on white space (strings.Fields); blank lines are
// skipped. name is used in error messages.
func ReadCorpus(r io.Reader, name string) ([][]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	var out [][]string
	line := 0
	for sc.Scan() {
		line++
		if f := strings.Fields(strings.ToLower(sc.Text())); len(f) > 0 {
			out = append(out, f)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d MiB", name, line+1, MaxLineBytes>>20)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
