// Package progress reports a long job's state on one status line. On a
// terminal the line is redrawn in place several times a second; written to
// a file or a pipe (a log), it becomes a separate line at most once a
// minute, so logs of hour-long runs stay small and readable.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"
)

const (
	// terminalEvery is the shortest interval between redraws on a terminal.
	terminalEvery = 200 * time.Millisecond
	// logEvery is the shortest interval between lines in a log.
	logEvery = time.Minute
)

// Line is one job's status line. A nil *Line (no writer) ignores every call.
type Line struct {
	w       io.Writer
	tty     bool
	now     func() time.Time
	last    time.Time
	pending string // the latest status, not yet written when shown is false
	shown   bool
	drawn   bool // a terminal line is open (needs a newline at End)
}

// New returns a status line on w, or nil when w is nil. Whether w is a
// terminal decides between redrawing and separate lines.
func New(w io.Writer) *Line {
	if w == nil {
		return nil
	}
	return newLine(w, IsTerminal(w), time.Now)
}

func newLine(w io.Writer, tty bool, now func() time.Time) *Line {
	return &Line{w: w, tty: tty, now: now, shown: true}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Show sets the status; it is written now if enough time has passed since
// the last write (or, on a terminal, the line's start), and otherwise kept
// for the next write or End.
func (l *Line) Show(format string, args ...any) {
	if l == nil {
		return
	}
	l.pending, l.shown = fmt.Sprintf(format, args...), false
	every := logEvery
	if l.tty {
		every = terminalEvery
	}
	now := l.now()
	switch {
	case l.last.IsZero() && !l.tty:
		// A log's first line waits a full interval: short jobs then write
		// only their final status.
		l.last = now
	case l.last.IsZero() || now.Sub(l.last) >= every:
		l.last = now
		l.write()
	}
}

// End writes the latest status if it was not written yet and closes the
// line; the next Show starts a new one.
func (l *Line) End() {
	if l == nil {
		return
	}
	if !l.shown {
		l.write()
	}
	if l.drawn {
		fmt.Fprintln(l.w)
		l.drawn = false
	}
	l.last = time.Time{}
}

func (l *Line) write() {
	l.shown = true
	if l.tty {
		// \x1b[K clears what a longer earlier status left on the line.
		fmt.Fprintf(l.w, "\r%s\x1b[K", l.pending)
		l.drawn = true
		return
	}
	fmt.Fprintln(l.w, l.pending)
}
