package cli

import (
	"slices"
	"testing"
)

func TestSeeds(t *testing.T) {
	for in, want := range map[string][]int64{"3": {0, 1, 2}, "1": {0}, "0,4,5": {0, 4, 5}, " 2, 7": {2, 7}} {
		var s Seeds
		if err := s.Set(in); err != nil || !slices.Equal(s, want) {
			t.Errorf("Set(%q) = %v, %v; want %v", in, s, err, want)
		}
	}
	for _, bad := range []string{"0", "-2", "a", "1,-1", "1,x", ""} {
		var s Seeds
		if err := s.Set(bad); err == nil {
			t.Errorf("Set(%q): want an error", bad)
		}
	}
}

func TestInts(t *testing.T) {
	var f Ints
	if err := f.Set(" 1, 2,,8"); err != nil || !slices.Equal(f, Ints{1, 2, 8}) || f.String() != "1,2,8" {
		t.Errorf("Set: %v %v", f, err)
	}
	if err := f.Set("1,x"); err == nil {
		t.Error("1,x accepted")
	}
}
