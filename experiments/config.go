package experiments

import (
	"fmt"
	"io"
	"math"

	"github.com/textarmor/textarmor/pipeline"
)

// configErrorf formats a *pipeline.ConfigError: a configuration that cannot
// run (the CLI's usage error).
func configErrorf(format string, args ...any) error {
	return &pipeline.ConfigError{Err: fmt.Errorf(format, args...)}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
