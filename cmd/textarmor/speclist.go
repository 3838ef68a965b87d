package main

import "strings"

// specList is a repeatable flag.
type specList []string

func (l *specList) String() string     { return strings.Join(*l, " ") }
func (l *specList) Set(s string) error { *l = append(*l, s); return nil }
