package counterfit

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// SimLex scores vectors on SimLex-999 (Hill et al. 2015), the benchmark the
// counter-fitting paper reports: Spearman's ρ between the gold similarity
// and the vectors' cosine over the pairs whose two words have a vector.
// path is the dataset's TSV (a header line, then word1, word2, POS, score,
// …). It returns ρ and the number of pairs scored.
func SimLex(path string, vecs *text.Vectors, vocab *text.Vocab) (rho float64, pairs int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("simlex: %w", err)
	}
	defer f.Close()
	var gold, got []float64
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimRight(sc.Text(), "\r"), "\t")
		if line == 1 || len(fields) == 1 && fields[0] == "" {
			continue // header, blank line
		}
		if len(fields) < 4 {
			return 0, 0, fmt.Errorf("%s:%d: want word1, word2, POS and score separated by tabs, got %d field(s)", path, line, len(fields))
		}
		score, err := strconv.ParseFloat(fields[3], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s:%d: score %q: %v", path, line, fields[3], err)
		}
		a, b := vocab.ID(strings.ToLower(fields[0])), vocab.ID(strings.ToLower(fields[1]))
		if a <= text.UnkID || b <= text.UnkID || !vecs.Found[a] || !vecs.Found[b] {
			continue
		}
		gold = append(gold, score)
		got = append(got, tensor.Cosine(vecs.Row(a), vecs.Row(b)))
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	rho, _, err = metrics.Spearman(gold, got)
	if err != nil {
		return 0, len(gold), fmt.Errorf("simlex: %d pairs covered: %w", len(gold), err)
	}
	return rho, len(gold), nil
}
