package pipeline

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/vocabgroup"
)

// maxGroups bounds GroupMaskConfig.Groups: one learnt scalar and one load
// counter per group, and no vocabulary has more words.
const maxGroups = 10_000_000

// GroupMaskConfig configures FLAT's trivial group-mask baseline (spec
// flat.md §11, Table 10) with standard training: Groups groups of words,
// each sharing one learnt scalar on its words' embeddings (0 = off). The
// groups are the neighbour-graph components of DefenseConfig.Synonyms
// packed into Groups, or k-means clusters of Vectors when given.
type GroupMaskConfig struct {
	Groups  int
	Vectors string
}

// apply groups vocab and sets cfg's group table; it returns the training
// record entry (nil when the group mask is off).
func (g *GroupMaskConfig) apply(cfg *nn.Config, vocab *text.Vocab, synPath, dataDir string, seed int64, log io.Writer) (map[string]any, error) {
	if g.Groups == 0 {
		return nil, nil
	}
	var groups []int32
	var n int
	rec := map[string]any{"groups": g.Groups}
	var how, extraWhat string
	if g.Vectors != "" {
		vs, err := text.LoadVectors(g.Vectors, vocab)
		if err != nil {
			return nil, err
		}
		if groups, n, err = vocabgroup.KMeans(vs, g.Groups, seed, 0); err != nil {
			return nil, err
		}
		rec["method"], rec["vectors"], rec["seed"] = vocabgroup.MethodKMeans, g.Vectors, seed
		how = fmt.Sprintf("k-means (Euclidean, unit-normalised vectors of %s, seed %d)", g.Vectors, seed)
		extraWhat = "words without a vector"
	} else {
		nb, path, err := LoadNeighbors(synPath, dataDir)
		if err != nil {
			return nil, err
		}
		if groups, n, err = vocabgroup.ByNeighbors(nb, vocab, g.Groups); err != nil {
			return nil, err
		}
		rec["method"], rec["synonyms"] = vocabgroup.MethodComponents, path
		how = fmt.Sprintf("%s of %s (k-means needs --group-vectors)", vocabgroup.MethodComponents, path)
		extraWhat = "words without neighbours"
	}
	sizes := vocabgroup.Sizes(groups, n)
	cfg.Groups, cfg.NumGroups = groups, n
	rec["sizes"] = sizes
	main := slices.Clone(sizes[:g.Groups])
	slices.Sort(main)
	fmt.Fprintf(log, "group mask: %d groups from %s; group sizes min %s, median %s, max %s; extra group holds %s %s (and <pad>, <unk>)\n",
		g.Groups, how, thousands(main[0]), thousands(main[len(main)/2]), thousands(main[len(main)-1]), thousands(sizes[g.Groups]-2), extraWhat)
	empty := 0 // main is sorted: empty groups come first
	for empty < len(main) && main[empty] == 0 {
		empty++
	}
	if empty > 0 {
		fmt.Fprintf(log, "group mask: note: %d of the %d groups are empty (fewer components or words than groups)\n", empty, g.Groups)
	}
	return rec, nil
}

// formatScales prints group scales compactly (the extra group last).
func formatScales(s []float32) string {
	var b strings.Builder
	for i, v := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.3f", v)
	}
	return b.String()
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
