package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// killedSwap leaves dir as a kill between the two renames of a Save of
// newer over older does: no dir, the old copy at dir.old-*, the complete
// new one at dir.tmp-*. It returns their paths.
func killedSwap(t *testing.T, dir string, older, newer *Bundle) (old, tmp string) {
	t.Helper()
	if err := Save(dir, older); err != nil {
		t.Fatal(err)
	}
	scratch := filepath.Join(filepath.Dir(dir), "scratch")
	if err := Save(scratch, newer); err != nil {
		t.Fatal(err)
	}
	old, tmp = dir+".old-0123456789abcdef", dir+".tmp-fedcba9876543210"
	if err := os.Rename(dir, old); err != nil {
		t.Fatal(err)
	}
	// The new copy was written after the old one.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(scratch, ConfigFile), later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(scratch, tmp); err != nil {
		t.Fatal(err)
	}
	return old, tmp
}

// unfinishedCopy adds a dir.tmp-* whose writing was cut before config.json,
// newer than everything else: it must never be taken for a model.
func unfinishedCopy(t *testing.T, dir string) string {
	t.Helper()
	p := dir + ".tmp-00000000000000aa"
	if err := os.Mkdir(p, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, WeightsFile), []byte("partial"), 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestRecoverKilledSwapTakesCompleteNewCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	old, tmp := killedSwap(t, dir, testBundle(1), testBundle(2))
	partial := unfinishedCopy(t, dir)
	mine := dir + ".tmp-mine" // a user's name, not a leftover
	if err := os.Mkdir(mine, 0o777); err != nil {
		t.Fatal(err)
	}

	// Before recovery, loading says where the complete copy is.
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), ".tmp-") && !strings.Contains(err.Error(), ".old-") {
		t.Fatalf("Load of a missing dir with leftovers: %v", err)
	}

	r, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.From != tmp {
		t.Fatalf("recovered from %q, want the newer complete copy %q", r.From, tmp)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, got, testBundle(2))
	slices.Sort(r.Removed)
	if want := []string{old, partial}; !slices.Equal(r.Removed, want) {
		t.Fatalf("removed %v, want %v", r.Removed, want)
	}
	for _, p := range []string{old, tmp, partial} {
		if exists(p) {
			t.Errorf("%s still there", p)
		}
	}
	if !exists(mine) {
		t.Fatal("a directory the user named was removed")
	}
	if left, _ := Leftovers(dir); len(left) != 0 {
		t.Fatalf("leftovers after recovery: %v", left)
	}
}

func TestRecoverFallsBackToOldCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	old, tmp := killedSwap(t, dir, testBundle(1), testBundle(2))
	// The new copy is damaged (a kill while it was being synced, a bad disk).
	if err := os.WriteFile(filepath.Join(tmp, WeightsFile), []byte("garbage"), 0o666); err != nil {
		t.Fatal(err)
	}
	r, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.From != old {
		t.Fatalf("recovered from %q, want %q", r.From, old)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, got, testBundle(1))
	if exists(tmp) {
		t.Fatal("the damaged copy was left behind")
	}
}

func TestRecoverCleansOnlyBesideAGoodModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	if err := Save(dir, testBundle(1)); err != nil {
		t.Fatal(err)
	}
	partial := unfinishedCopy(t, dir)
	file := filepath.Join(filepath.Dir(dir), ".model.tmp-0123456789abcdef")
	if err := os.WriteFile(file, []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	// A damaged model: nothing is touched, and the damage is reported.
	wpath := filepath.Join(dir, WeightsFile)
	good, err := os.ReadFile(wpath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wpath, append(slices.Clone(good), 0), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(dir); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("Recover beside a damaged model: %v", err)
	}
	if !exists(partial) || !exists(file) {
		t.Fatal("leftovers removed beside a damaged model")
	}
	if err := os.WriteFile(wpath, good, 0o666); err != nil {
		t.Fatal(err)
	}
	r, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.From != "" || len(r.Removed) != 2 || exists(partial) || exists(file) {
		t.Fatalf("Recover beside a good model: %+v", r)
	}
}

func TestRecoverWithoutCompleteCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	partial := unfinishedCopy(t, dir)
	r, err := Recover(dir)
	if err != nil || r.From != "" || len(r.Removed) != 0 {
		t.Fatalf("Recover = %+v, %v; want nothing done", r, err)
	}
	if !exists(partial) {
		t.Fatal("the only trace of the run was removed")
	}
	if r, err := Recover(filepath.Join(t.TempDir(), "none")); err != nil || r.From != "" {
		t.Fatalf("Recover of nothing = %+v, %v", r, err)
	}
}
