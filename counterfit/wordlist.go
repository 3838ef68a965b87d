package counterfit

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/textarmor/textarmor/text"
)

// ReadWordList reads a vocabulary file, one word a line (lower-cased,
// blank lines and repeats skipped), into a vocabulary with the reserved
// words first: the words the paper reads, fits and writes.
func ReadWordList(path string) (*text.Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	words := []string{text.PadWord, text.UnkWord}
	seen := map[string]bool{text.PadWord: true, text.UnkWord: true}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
			continue
		case len(fields) > 1:
			return nil, fmt.Errorf("%s:%d: want one word a line, got %d", path, line, len(fields))
		}
		w := strings.ToLower(fields[0])
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(words) == 2 {
		return nil, fmt.Errorf("%s: no words", path)
	}
	return text.NewVocab(words)
}
