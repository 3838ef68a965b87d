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

// Ints is a flag of comma-separated integers ("1,2"); ranges are the
// caller's to check.
type Ints []int

func (f *Ints) String() string {
	var parts []string
	for _, x := range *f {
		parts = append(parts, strconv.Itoa(x))
	}
	return strings.Join(parts, ",")
}

func (f *Ints) Set(s string) error {
	*f = nil
	for _, p := range SplitList(s) {
		x, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("%q is not an integer", p)
		}
		*f = append(*f, x)
	}
	return nil
}

// Seeds is --seeds of the table benches: a count N (instance offsets
// 0..N-1) or a comma-separated list of offsets (0,4,5); unset is one
// instance, the single-seed table.
type Seeds []int64

func (f *Seeds) String() string {
	var parts []string
	for _, s := range *f {
		parts = append(parts, strconv.FormatInt(s, 10))
	}
	return strings.Join(parts, ",")
}

func (f *Seeds) Set(v string) error {
	if !strings.Contains(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is neither a count ≥ 1 nor a list of seed offsets like 0,1,2", v)
		}
		*f = make(Seeds, n)
		for i := range *f {
			(*f)[i] = int64(i)
		}
		return nil
	}
	var seeds Seeds
	for _, part := range strings.Split(v, ",") {
		s, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || s < 0 {
			return fmt.Errorf("%q: %q is not a seed offset ≥ 0", v, part)
		}
		seeds = append(seeds, s)
	}
	*f = seeds
	return nil
}
