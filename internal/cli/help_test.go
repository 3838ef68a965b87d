package cli

import (
	"errors"
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

func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	lr := fs.Float64("lr", 1, "rate")
	fs.Var(fs.Lookup("lr").Value, "rate", "")
	var ue UsageError
	if err := Parse(fs, []string{"--lr", "NaN"}, nil); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--lr NaN: want a finite number") {
		t.Errorf("NaN: %v", err)
	}
	if err := ParseNoArgs(fs, []string{"--lr", "2", "stray", "--lr", "3"}, nil); !errors.As(err, &ue) || !strings.Contains(err.Error(), `unexpected argument "stray"`) {
		t.Errorf("stray argument: %v", err)
	}
	if err := Parse(fs, []string{"--rate", "0.5"}, map[string]string{"rate": "lr"}); err != nil || *lr != 0.5 || !strings.Contains(out.String(), "note: --rate is now --lr") {
		t.Errorf("old name: lr %g, %v, output %q", *lr, err, out.String())
	}
	if err := Parse(fs, []string{"--nope"}, nil); !errors.As(err, &ue) {
		t.Errorf("unknown flag: %v", err)
	}
}

func TestCopyFieldsAndList(t *testing.T) {
	type inner struct{ A, B int }
	type outer struct {
		In inner
		S  string
	}
	dst, src := outer{In: inner{1, 2}, S: "x"}, outer{In: inner{10, 20}, S: "y"}
	CopyFields(&dst, &src, []string{"In.B", "S"})
	if dst != (outer{In: inner{1, 20}, S: "y"}) {
		t.Errorf("copied %+v", dst)
	}
	var l List
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&l, "use", "")
	if err := fs.Parse([]string{"--use", "a", "--use", "b c"}); err != nil || len(l) != 2 || l.String() != "a b c" {
		t.Errorf("list %q (%v)", l, err)
	}
}

func TestFloats(t *testing.T) {
	var f Floats
	if err := f.Set("0.5, 1,2.5,"); err != nil || len(f) != 3 || f[2] != 2.5 || f.String() != "0.5,1,2.5" {
		t.Errorf("floats %v (%v)", f, err)
	}
	for _, bad := range []string{"1,x", "NaN", "1,Inf"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFlagValue(t *testing.T) {
	for args, want := range map[string]string{"--type lstm --out x": "lstm", "-type=ngram": "ngram", "--out x": "", "--type": "", "--types y": ""} {
		if got := FlagValue(strings.Fields(args), "type"); got != want {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
}
