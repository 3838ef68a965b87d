package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/vocabgroup"
)

// groupFlags configure FLAT's trivial group-mask baseline (spec flat.md §11,
// Table 10): `train --defense standard --group-mask G`.
type groupFlags struct {
	groups  int
	vectors string
}

func (g *groupFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.groups, "group-mask", 0, "standard: FLAT's trivial group-mask baseline with this many groups, each sharing one learnt scalar on its words' embeddings (0 = off); "+
		"groups are the neighbour-graph components of --synonyms packed into G, or k-means clusters with --group-vectors")
	fs.StringVar(&g.vectors, "group-vectors", "", "standard: word vectors (e.g. counter-fitted) to cluster by k-means for --group-mask (spec §11); default: neighbour-graph components of --synonyms")
}

// checkFlag reports a group-mask flag given with another defense, or
// --synonyms given with standard but without --group-mask.
func (g *groupFlags) checkFlag(name, defenseName string) error {
	switch name {
	case "group-mask", "group-vectors":
		if defenseName != "standard" {
			return usageError{fmt.Errorf("--%s needs --defense standard (the group-mask baseline trains with cross-entropy)", name)}
		}
	}
	return nil
}

// validate checks the flag combination once every flag is parsed and
// --group-mask's range (numbers) is checked.
func (g *groupFlags) validate(synonymsSet bool) error {
	switch {
	case g.groups == 0 && g.vectors != "":
		return usageError{fmt.Errorf("--group-vectors needs --group-mask G")}
	case g.vectors != "" && synonymsSet:
		return usageError{fmt.Errorf("give --group-vectors (k-means) or --synonyms (neighbour-graph components), not both")}
	}
	return nil
}

// numbers is the range check of --group-mask.
func (g *groupFlags) numbers() []numRule {
	return []numRule{{g.groups >= 0 && g.groups <= maxGroups, "group-mask", g.groups, fmt.Sprintf("in [0, %d] (0 = off)", maxGroups)}}
}

// apply groups vocab and sets cfg's group table; it returns the training
// record entry (nil when the group mask is off).
func (g *groupFlags) apply(cfg *nn.Config, vocab *text.Vocab, synPath, dataDir string, seed int64, stderr io.Writer) (map[string]any, error) {
	if g.groups == 0 {
		return nil, nil
	}
	var groups []int32
	var n int
	rec := map[string]any{"groups": g.groups}
	var how, extraWhat string
	if g.vectors != "" {
		vs, err := text.LoadVectors(g.vectors, vocab)
		if err != nil {
			return nil, err
		}
		if groups, n, err = vocabgroup.KMeans(vs, g.groups, seed, 0); err != nil {
			return nil, err
		}
		rec["method"], rec["vectors"], rec["seed"] = vocabgroup.MethodKMeans, g.vectors, seed
		how = fmt.Sprintf("k-means (Euclidean, unit-normalised vectors of %s, seed %d)", g.vectors, seed)
		extraWhat = "words without a vector"
	} else {
		nb, path, err := loadNeighborFile(synPath, dataDir)
		if err != nil {
			return nil, err
		}
		if groups, n, err = vocabgroup.ByNeighbors(nb, vocab, g.groups); err != nil {
			return nil, err
		}
		rec["method"], rec["synonyms"] = vocabgroup.MethodComponents, path
		how = fmt.Sprintf("%s of %s (k-means needs --group-vectors)", vocabgroup.MethodComponents, path)
		extraWhat = "words without neighbours"
	}
	sizes := vocabgroup.Sizes(groups, n)
	cfg.Groups, cfg.NumGroups = groups, n
	rec["sizes"] = sizes
	main := slices.Clone(sizes[:g.groups])
	slices.Sort(main)
	fmt.Fprintf(stderr, "group mask: %d groups from %s; group sizes min %s, median %s, max %s; extra group holds %s %s (and <pad>, <unk>)\n",
		g.groups, how, thousands(main[0]), thousands(main[len(main)/2]), thousands(main[len(main)-1]), thousands(sizes[g.groups]-2), extraWhat)
	empty := 0 // main is sorted: empty groups come first
	for empty < len(main) && main[empty] == 0 {
		empty++
	}
	if empty > 0 {
		fmt.Fprintf(stderr, "group mask: note: %d of the %d groups are empty (fewer components or words than groups)\n", empty, g.groups)
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
