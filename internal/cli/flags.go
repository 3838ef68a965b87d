package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// UsageError marks an error in how a command was called (exit code 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// NewFlags makes the flag set of command name of program prog, whose
// --help prints the usage line and every flag, as --name, in groups.
func NewFlags(prog, name, usage string, stderr io.Writer, groups func(cmd string) []Group) *flag.FlagSet {
	fs := flag.NewFlagSet(prog+" "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s %s\n\n", prog, usage)
		PrintFlags(stderr, fs, groups(name))
	}
	return fs
}

// ParseNoArgs is Parse for commands that take no positional arguments:
// Go's flag package stops at the first one and would silently drop every
// flag after it ("train … stray --epochs 3" ran 10 epochs).
func ParseNoArgs(fs *flag.FlagSet, args []string, renamed map[string]string) error {
	if err := Parse(fs, args, renamed); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return UsageError{fmt.Errorf("unexpected argument %q (flags after it were not read; this command takes none)", fs.Arg(0))}
	}
	return nil
}

// Parse parses flags, turning errors into usage errors. No numeric flag
// means anything as NaN or an infinity (they panicked deep in training or
// passed silently), so those are refused, naming the flag. A flag given
// by an old name (renamed: old → new, registered without usage text)
// gets a note.
func Parse(fs *flag.FlagSet, args []string, renamed map[string]string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	var bad error
	fs.Visit(func(f *flag.Flag) {
		if name, ok := renamed[f.Name]; ok && f.Usage == "" {
			fmt.Fprintf(fs.Output(), "note: --%s is now --%s\n", f.Name, name)
		}
		g, ok := f.Value.(flag.Getter)
		if !ok || bad != nil {
			return
		}
		if x, ok := g.Get().(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			bad = UsageError{fmt.Errorf("--%s %v: want a finite number", f.Name, x)}
		}
	})
	return bad
}

// List is a repeatable flag: each use appends its value.
type List []string

func (l *List) String() string     { return strings.Join(*l, " ") }
func (l *List) Set(s string) error { *l = append(*l, s); return nil }

// Floats is a flag of comma-separated numbers ("0.5,1,2.5"); NaN and the
// infinities are refused.
type Floats []float64

func (f *Floats) String() string {
	var parts []string
	for _, x := range *f {
		parts = append(parts, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func (f *Floats) Set(s string) error {
	*f = nil
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		x, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%q is not a finite number", p)
		}
		*f = append(*f, x)
	}
	return nil
}

// FlagValue is the value of flag name among args ("--name v", "--name=v",
// one dash or two; "" when absent), for commands whose other flags depend
// on it (lm train --type).
func FlagValue(args []string, name string) string {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		switch {
		case a == name && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, name+"="):
			return a[len(name)+1:]
		}
	}
	return ""
}
