package senteval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookupSet(t *testing.T) {
	for _, name := range []string{"stsb", "sickr", "sts12", "sts2016"} {
		if s, err := LookupSet(name); err != nil || s.Name != name {
			t.Errorf("%s: %+v, %v", name, s, err)
		}
	}
	for _, name := range []string{"nope", "stsx", ""} {
		if _, err := LookupSet(name); !errors.Is(err, ErrUnknownSet) || !strings.Contains(err.Error(), "valid: stsb") {
			t.Errorf("%q: %v, want ErrUnknownSet listing the sets", name, err)
		}
	}
	if _, err := LookupSet("sts99"); err == nil || errors.Is(err, ErrUnknownSet) || !strings.Contains(err.Error(), "99") {
		t.Errorf("sts99: %v, want the dataset's year error", err)
	}
	if _, err := (Set{Name: "sts12"}).Load(t.TempDir(), "test"); err == nil {
		t.Error("a Set not made by LookupSet loaded")
	}
}

func TestSetLoadNamesGroups(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "stsb"), 0o755); err != nil {
		t.Fatal(err)
	}
	rows := "g\tf\t2012\t1\t4.5\ta good film\ta fine film\ng\tf\t2012\t2\t0.5\ta good film\ta dull plot\n"
	if err := os.WriteFile(filepath.Join(dir, "stsb", "sts-dev.csv"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := LookupSet("stsb")
	groups, err := s.Load(dir, "dev")
	if err != nil || len(groups) != 1 || groups[0].Name != "stsb/dev" || len(groups[0].Pairs) != 2 || groups[0].Pairs[1].Score != 0.5 {
		t.Fatalf("stsb dev: %+v, %v", groups, err)
	}
	if _, err := s.Load(dir, "test"); err == nil || !strings.Contains(err.Error(), "sts-test.csv") {
		t.Errorf("missing split: %v, want the file named", err)
	}
}

func TestSetLoadAllSplits(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "stsb"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, split := range []string{"train", "dev", "test"} {
		row := "g\tf\t2012\t1\t" + []string{"1.0", "2.0", "3.0"}[i] + "\ta " + split + " film\ta fine film\n"
		if err := os.WriteFile(filepath.Join(dir, "stsb", "sts-"+split+".csv"), []byte(row), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := LookupSet("stsb")
	groups, err := s.Load(dir, "all")
	if err != nil || len(groups) != 1 || groups[0].Name != "stsb/all" || len(groups[0].Pairs) != 3 ||
		groups[0].Pairs[0].A != "a train film" || groups[0].Pairs[2].Score != 3 {
		t.Fatalf("stsb all: %+v, %v: want train, dev, test in that order", groups, err)
	}
	if s.Subsets() {
		t.Error("stsb has subsets")
	}
	if y, _ := LookupSet("sts13"); !y.Subsets() {
		t.Error("sts13 has no subsets")
	}
}
