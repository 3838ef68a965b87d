package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// clock is a fake time source moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(1e9, 0)} }

func TestLogLinesAreRateLimited(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	l := newLine(&b, false, c.now)
	for i := 1; i <= 300; i++ {
		l.Show("step %d", i)
		c.advance(time.Second)
	}
	l.End()
	// Written: the status a minute in (61, 121, 181, 241 s) and the
	// final one at End.
	want := "step 61\nstep 121\nstep 181\nstep 241\nstep 300\n"
	if got := b.String(); got != want {
		t.Errorf("log output\n%q\nwant\n%q", got, want)
	}
	// End does not repeat a status already written, and the next Show
	// after End starts a new line at once.
	b.Reset()
	l.Show("epoch 2")
	l.End()
	if got := b.String(); got != "epoch 2\n" {
		t.Errorf("after End: %q, want %q", got, "epoch 2\n")
	}
}

func TestTerminalRedrawsInPlace(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	l := newLine(&b, true, c.now)
	l.Show("a")
	c.advance(100 * time.Millisecond)
	l.Show("b") // too soon: kept
	c.advance(100 * time.Millisecond)
	l.Show("c")
	c.advance(10 * time.Millisecond)
	l.Show("d")
	l.End()
	want := "\ra\x1b[K\rc\x1b[K\rd\x1b[K\n"
	if got := b.String(); got != want {
		t.Errorf("terminal output %q, want %q", got, want)
	}
}

func TestNilLineIgnoresCalls(t *testing.T) {
	l := New(nil)
	if l != nil {
		t.Fatal("New(nil) is not nil")
	}
	l.Show("x %d", 1)
	l.End()
}

func TestNewOnBufferWritesLines(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	l.Show("one")
	l.End()
	if got := b.String(); got != "one\n" || strings.Contains(got, "\r") {
		t.Errorf("a buffer is not a terminal: got %q", got)
	}
}
