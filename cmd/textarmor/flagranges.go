package main

import (
	"fmt"
	"math"
	"runtime"

	"github.com/textarmor/textarmor/text"
)

// numRule is one row of a numeric flag check: ok is whether val, the
// value of --flag, is in range; want says the range in words.
type numRule struct {
	ok   bool
	flag string
	val  any
	want string
}

// checkNumbers returns a usage error naming the flag, the value and the
// valid range of the first rule that fails (nil when all hold). Every
// command checks its numeric flags this way right after parsing them,
// before it reads data or trains: an out-of-range value is refused there
// instead of panicking later or silently falling back to a default.
func checkNumbers(rules ...numRule) error {
	for _, r := range rules {
		if !r.ok {
			return usageError{fmt.Errorf("--%s %v must be %s", r.flag, r.val, r.want)}
		}
	}
	return nil
}

// finite reports whether x is neither NaN nor an infinity. parse refuses
// those for flags given on the command line; rules test it too for values
// parsed elsewhere (recipe flags).
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Upper bounds of flags whose value sizes an allocation.
const (
	// maxWidth bounds embedding sizes and layer widths: the largest
	// dimension a vector file may have (published vectors have 50–4,096).
	maxWidth = text.MaxVectorDim
	// maxWindow bounds a CNN window width (Kim's are 3, 4 and 5).
	maxWindow = 1000
	// maxSynonymK bounds --ftml-k: each batch allocates anchors × k ids.
	maxSynonymK = 1000
	// maxGroups bounds --group-mask: one learnt scalar and one load
	// counter per group, and no vocabulary has more words.
	maxGroups = 10_000_000
	// maxWordvecWorkers is the wordvec package's limit on shards.
	maxWordvecWorkers = 256
)

// workersRule checks a count of parallel workers (goroutines, each with its
// own buffers): at least 1, at most 4,096 or the machine's core count.
func workersRule(flag string, v int) numRule {
	hi := max(4096, runtime.NumCPU())
	return numRule{v >= 1 && v <= hi, flag, v, fmt.Sprintf("in [1, %d]", hi)}
}

// widthRule checks a layer width or embedding size in [lo, maxWidth]; lo is
// 0 where 0 means "no such layer" (none says so).
func widthRule(flag string, v, lo int, none string) numRule {
	want := fmt.Sprintf("in [%d, %d]", lo, maxWidth)
	if none != "" {
		want += " (" + none + ")"
	}
	return numRule{v >= lo && v <= maxWidth, flag, v, want}
}
