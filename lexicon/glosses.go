package lexicon

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WordNetSentences reads the glosses of WordNet's data.noun, data.verb,
// data.adj and data.adv in dir: each synset's definitions and its quoted
// usage examples, as separate sentences (definitions get a capital letter
// and a final period), in file order. The license header lines (starting
// with two spaces) are skipped. It is the offline sentence source of
// RobustEmbed's corpus (spec robustembed.md §11).
func WordNetSentences(dir string) (definitions, examples []string, err error) {
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		path := filepath.Join(dir, "data."+pos)
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("wordnet glosses: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			s := sc.Text()
			if strings.HasPrefix(s, "  ") {
				continue
			}
			_, gloss, ok := strings.Cut(s, " | ")
			if !ok {
				f.Close()
				return nil, nil, fmt.Errorf("%s:%d: a synset line without a gloss (\" | \")", path, line)
			}
			d, e := splitGloss(gloss)
			definitions = append(definitions, d...)
			examples = append(examples, e...)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return definitions, examples, nil
}

// splitGloss separates a gloss's "; "-separated parts into definitions
// and double-quoted examples.
func splitGloss(g string) (defs, examples []string) {
	for _, part := range strings.Split(strings.TrimSpace(g), ";") {
		p := strings.TrimSpace(part)
		if p == "" {
			continue
		}
		if strings.HasPrefix(p, `"`) {
			p = strings.Trim(p, `"`)
			if i := strings.Index(p, `"`); i >= 0 { // an example followed by an attribution
				p = p[:i]
			}
			if p = strings.TrimSpace(p); p != "" {
				examples = append(examples, p)
			}
			continue
		}
		if strings.ContainsRune(p, '"') {
			continue // a definition mixed with a quote: ambiguous, left out
		}
		p = strings.ToUpper(p[:1]) + p[1:]
		if !strings.HasSuffix(p, ".") {
			p += "."
		}
		defs = append(defs, p)
	}
	return defs, examples
}
