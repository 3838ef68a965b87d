package cli

import (
	"reflect"
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
