package main

import "flag"

// retrofitting reports whether --retrofit was given a positive value.
func retrofitting(fs *flag.FlagSet) bool {
	on := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "retrofit" && f.Value.String() != "0" {
			on = true
		}
	})
	return on
}
