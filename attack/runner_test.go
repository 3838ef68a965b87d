package attack

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	// 30 of this run's 120 examples in 60 s, 10 more resumed: 90 left at
	// 2 s each.
	if got, want := progressLine(40, 130, 30, 120, time.Minute), "attacked 40/130 (60.0s, about 3m0s left)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := progressLine(130, 130, 120, 120, time.Minute), "attacked 130/130 (60.0s)"; got != want {
		t.Errorf("finished: got %q, want %q", got, want)
	}
}
