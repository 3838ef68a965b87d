// Package quote quotes untrusted text for error messages, briefly.
package quote

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Short is strconv.Quote of s, cut after the characters that quote to at
// most max characters (never inside one) and followed by s's length in
// bytes when cut: a binary file read as text has lines of megabytes.
func Short(s string, max int) string {
	q := strconv.Quote(s)
	if utf8.RuneCountInString(q) <= max+2 {
		return q
	}
	n, width := 0, 0
	for n < len(s) {
		_, size := utf8.DecodeRuneInString(s[n:])
		w := utf8.RuneCountInString(strconv.Quote(s[n:n+size])) - 2
		if width+w > max {
			break
		}
		n, width = n+size, width+w
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:n]), len(s))
}

// Printable writes control characters of s (terminal escape sequences,
// stray carriage returns) as \xNN, so that echoing a text can neither
// drive the terminal nor break the one-line-per-text output.
func Printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
