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

// PaperSets are the seven sets of the STS table of SimCSE and RobustEmbed
// (Table 1), in its column order; Avg averages them.
var PaperSets = []string{"sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"}

// Group is a named list of pairs: stsb/SPLIT, sickr/SPLIT, or one subset
// of an STS year (sts12/MSRpar, …), scored on its own.
type Group struct {
	Name  string
	Pairs []dataset.SimPair
}

// Subsets reports whether the set has several groups (an STS year), to be
// scored together by STSAll.
func (s Set) Subsets() bool { return s.subsets != nil }

// Load reads the set's groups from a data folder laid out like the
// project's shared/data: split of stsb and sickr (train, dev or test, or
// all: the three concatenated in that order, one group; SICK's dev is its
// trial file); each subset of an STS year, which has test data only.
func (s Set) Load(dataDir, split string) ([]Group, error) {
	switch s.Name {
	case "stsb", "sickr":
		load := dataset.LoadSTSB
		if s.Name == "sickr" {
			load = dataset.LoadSICKR
		}
		splits := []string{split}
		if split == "all" {
			splits = []string{"train", "dev", "test"}
		}
		var pairs []dataset.SimPair
		for _, sp := range splits {
			p, err := load(dataDir, sp)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p...)
		}
		return []Group{{s.Name + "/" + split, pairs}}, nil
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
