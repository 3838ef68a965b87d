package defense

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// FreeLBRows are the paper's FreeLB settings per dataset (carl-rar.md §3.1,
// Table 1), found on dev accuracy and frozen for CARL and RAR.
var FreeLBRows = map[string]FreeLBConfig{
	"sst2":   {N: 2, Alpha: 0.1, Gamma: 0.6},
	"yelp-p": {N: 3, Alpha: 0.05, Gamma: 0.5},
	"yahoo":  {N: 3, Alpha: 0.01},
	"ag":     {N: 3, Alpha: 0.01},
}

// FreeLBRowFor names the Table 1 row a dataset takes: its own where the
// paper has one, else the substitute's of spec §9 (IMDB for Yelp-P, TREC
// for Yahoo! Answers); other sentence-level sets take SST-2's.
func FreeLBRowFor(dataset string) string {
	switch strings.ToLower(dataset) {
	case "imdb", "yelp", "yelp-p":
		return "yelp-p"
	case "trec", "yahoo":
		return "yahoo"
	case "agnews", "ag", "ag_news":
		return "ag"
	}
	return "sst2"
}

// FreeLBRow returns row's settings with given's non-negative fields in
// their place (a negative field takes the row's; NaN stays NaN, which
// Validate refuses).
func FreeLBRow(row string, given FreeLBConfig) (FreeLBConfig, error) {
	c, ok := FreeLBRows[row]
	if !ok {
		var names []string
		for k := range FreeLBRows {
			names = append(names, k)
		}
		sort.Strings(names)
		return FreeLBConfig{}, fmt.Errorf("unknown FreeLB row %q (valid: auto, %s)", row, strings.Join(names, ", "))
	}
	if given.N >= 0 {
		c.N = given.N
	}
	for _, f := range []struct{ dst, src *float64 }{{&c.Alpha, &given.Alpha}, {&c.Gamma, &given.Gamma}, {&c.Eps, &given.Eps}} {
		if *f.src >= 0 || math.IsNaN(*f.src) { // NaN stays, for Validate to refuse
			*f.dst = *f.src
		}
	}
	return c, nil
}

// SharesFlags reports whether defense name takes other's settings: CARL
// and RAR extend FreeLB and take its.
func SharesFlags(name, other string) bool {
	return other == "freelb" && (name == "carl" || name == "rar")
}
