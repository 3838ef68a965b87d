package train

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/textarmor/textarmor/internal/progress"
)

// epochBar shows an epoch's bar with ETA and running loss and accuracy (NaN:
// none, left out) on
// a progress.Line (redrawn on a terminal, a line a minute in a log).
type epochBar struct {
	line  *progress.Line
	label string
	total int
	start time.Time
}

func newProgress(w io.Writer, label string, total int) *epochBar {
	return &epochBar{line: progress.New(w), label: label, total: total, start: time.Now()}
}

func (p *epochBar) update(done int, loss, acc float64) {
	if p.line == nil {
		return
	}
	frac := float64(done) / float64(max(p.total, 1))
	const width = 24
	fill := min(width, int(frac*width))
	elapsed := time.Since(p.start)
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(elapsed)/frac) - elapsed).Round(time.Second).String()
	}
	accText := ""
	if !math.IsNaN(acc) {
		accText = fmt.Sprintf(" acc %.3f", acc)
	}
	p.line.Show("%s [%s%s] %3.0f%% %d/%d loss %.4f%s elapsed %s eta %s",
		p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), 100*frac,
		done, p.total, loss, accText, elapsed.Round(time.Second), eta)
}

func (p *epochBar) finish() { p.line.End() }
