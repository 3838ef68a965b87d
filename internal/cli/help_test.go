package cli

import (
	"flag"
	"strings"
	"testing"
)

func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	for i := range 20 {
		fs.Int("n"+string(rune('a'+i)), i, "a number")
	}
	fs.String("name", "v", "a name")
	fs.Var(fs.Lookup("name").Value, "old-name", "")
	var b strings.Builder
	PrintFlags(&b, fs, []Group{{Title: "Names", Has: NameIn("name", "old-name")}})
	out := b.String()
	if !strings.HasPrefix(out, "Names:\n  --name string\n    \ta name (default \"v\")\n") || !strings.Contains(out, "Other:\n  --na int\n") {
		t.Errorf("help:\n%s", out)
	}
	if strings.Contains(out, "old-name") || !strings.Contains(out, "  --nt int\n    \ta number (default 19)\n") {
		t.Errorf("help shows the usage-less flag or lacks a default:\n%s", out)
	}
	b.Reset()
	small := flag.NewFlagSet("y", flag.ContinueOnError)
	small.Bool("v", false, "verbose")
	PrintFlags(&b, small, nil)
	if b.String() != "Flags:\n  --v\n    \tverbose\n" {
		t.Errorf("short help: %q", b.String())
	}
}

func TestCompletionBash(t *testing.T) {
	s := CompletionBash("tool")
	if !strings.Contains(s, "complete -o filenames -F _tool tool") || strings.Contains(s, "textarmor") {
		t.Errorf("script:\n%s", s)
	}
}
