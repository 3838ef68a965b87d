package quote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShort(t *testing.T) {
	if got := Short("naïve", 40); got != `"naïve"` {
		t.Fatalf("short text: %s", got)
	}
	long := strings.Repeat("é", 30) + "\x00\xff"
	got := Short(long, 10)
	if !utf8.ValidString(got) || !strings.HasPrefix(got, `"`+strings.Repeat("é", 10)+`"...`) || !strings.HasSuffix(got, "(62 bytes)") {
		t.Fatalf("long text: %s", got)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{"plain text": "plain text", "a\x1b[31mred": `a\x1b[31mred`, "line\rfeed\n": `line\x0dfeed\x0a`} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
