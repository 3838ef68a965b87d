package senteval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/dataset"
)

// Set is one similarity benchmark as `textarmor eval-sts --sets` names it:
// stsb (STS-B), sickr (SICK-R) or an STS year, sts12 … sts16.
type Set struct {
	Name    string
	year    int      // an STS year's number as given; 0 for stsb and sickr
	subsets []string // an STS year's subsets, in report order
}

// ErrUnknownSet is LookupSet's error for a name that is no set.
var ErrUnknownSet = errors.New("unknown set")

// LookupSet parses a set name.
func LookupSet(name string) (Set, error) {
	switch {
	case name == "stsb" || name == "sickr":
		return Set{Name: name}, nil
	case strings.HasPrefix(name, "sts"):
		year, err := strconv.Atoi(strings.TrimPrefix(name, "sts"))
		if err != nil {
			break
		}
		subsets, err := dataset.STSSubsets(year)
		if err != nil {
			return Set{}, err
		}
		return Set{Name: name, year: year, subsets: subsets}, nil
	}
	return Set{}, fmt.Errorf("%w %q (valid: stsb, sickr, sts12 … sts16)", ErrUnknownSet, name)
}

// Group is a named list of pairs: stsb/SPLIT, sickr/SPLIT, or one subset
// of an STS year (sts12/MSRpar, …), scored on its own.
type Group struct {
	Name  string
	Pairs []dataset.SimPair
}

// Load reads the set's groups from a data folder laid out like the
// project's shared/data: split (train, dev or test) of stsb and sickr; each
// subset of an STS year, which has test data only.
func (s Set) Load(dataDir, split string) ([]Group, error) {
	switch s.Name {
	case "stsb":
		p, err := dataset.LoadSTSB(dataDir, split)
		return []Group{{"stsb/" + split, p}}, err
	case "sickr":
		p, err := dataset.LoadSICKR(dataDir, split)
		return []Group{{"sickr/" + split, p}}, err
	}
	if s.subsets == nil {
		return nil, fmt.Errorf("senteval: set %q was not made by LookupSet", s.Name)
	}
	all, err := dataset.LoadSTS(dataDir, s.year)
	if err != nil {
		return nil, err
	}
	var out []Group
	for _, sub := range s.subsets {
		out = append(out, Group{s.Name + "/" + sub, all[sub]})
	}
	return out, nil
}
