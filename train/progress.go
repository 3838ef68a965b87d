package train

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line bar with ETA and running loss and accuracy,
// redrawn at most every 200 ms.
type progress struct {
	w           io.Writer
	label       string
	total       int
	start, last time.Time
}

func newProgress(w io.Writer, label string, total int) *progress {
	now := time.Now()
	return &progress{w: w, label: label, total: total, start: now}
}

func (p *progress) update(done int, loss, acc float64) {
	if p.w == nil {
		return
	}
	now := time.Now()
	if done < p.total && now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	frac := float64(done) / float64(max(p.total, 1))
	const width = 24
	fill := int(frac * width)
	elapsed := now.Sub(p.start)
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(elapsed)/frac) - elapsed).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%% %d/%d loss %.4f acc %.3f elapsed %s eta %s ",
		p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), 100*frac,
		done, p.total, loss, acc, elapsed.Round(time.Second), eta)
}

func (p *progress) finish() {
	if p.w != nil {
		fmt.Fprintln(p.w)
	}
}
