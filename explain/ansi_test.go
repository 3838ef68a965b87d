package explain

import (
	"strings"
	"testing"
)

func TestColorWord(t *testing.T) {
	if got := ColorWord("w", 1, 0); got != "w" {
		t.Errorf("no scale: %q", got)
	}
	if got := ColorWord("good", 2, 2); got != "\x1b[48;5;46m\x1b[30mgood\x1b[0m" {
		t.Errorf("the strongest positive score: %q", got)
	}
	if got := ColorWord("bad", -2, 2); !strings.HasPrefix(got, "\x1b[48;5;196m") {
		t.Errorf("the strongest negative score: %q", got)
	}
	if got := ColorWord("meh", 0, 2); !strings.HasPrefix(got, "\x1b[48;5;255m") {
		t.Errorf("a zero score: %q", got)
	}
}
