package main

import (
	"fmt"
	"math"
	"runtime"
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

// workersRule checks a count of parallel workers (goroutines, each with its
// own buffers): at least 1, at most 4,096 or the machine's core count.
func workersRule(flag string, v int) numRule {
	hi := max(4096, runtime.NumCPU())
	return numRule{v >= 1 && v <= hi, flag, v, fmt.Sprintf("in [1, %d]", hi)}
}
