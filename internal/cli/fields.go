package cli

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// CopyFields sets, in the struct dst points to, each field named by a
// dotted path ("Options.LR", "Net.Dropout") to src's value: how a flag
// given to a whole table lands on each row's configuration. A path that
// names no field panics (a test checks the paths a program uses).
func CopyFields(dst, src any, paths []string) {
	d0, s0 := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for _, path := range paths {
		d, s := d0, s0
		for _, field := range strings.Split(path, ".") {
			d, s = d.FieldByName(field), s.FieldByName(field)
		}
		d.Set(s)
	}
}

// SplitList splits a comma-separated flag value, dropping empty items and
// the spaces around each.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Epochs parses the comma-separated epochs (each ≥ 1) of flag.
func Epochs(flag, list string) ([]int, error) {
	var out []int
	for _, s := range SplitList(list) {
		e, err := strconv.Atoi(s)
		if err != nil {
			return nil, UsageError{fmt.Errorf("%s %q: %v", flag, list, err)}
		}
		if e < 1 {
			return nil, UsageError{fmt.Errorf("%s %q: epoch %d must be at least 1", flag, list, e)}
		}
		out = append(out, e)
	}
	return out, nil
}
