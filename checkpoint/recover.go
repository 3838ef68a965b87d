package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Leftovers lists the siblings of dir that an interrupted save leaves
// behind: dir.tmp-* (a new copy being written, complete once its
// config.json is there) and dir.old-* (the previous copy moved aside), plus
// .base.tmp-* files of an interrupted atomic file write. Only names with
// the exact random suffix the writers use are listed, so nothing a user
// named is ever taken for a leftover.
func Leftovers(dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	ents, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		for _, prefix := range []string{base + ".tmp-", base + ".old-", "." + base + ".tmp-"} {
			if rest, ok := strings.CutPrefix(name, prefix); ok && isSuffix(rest) {
				out = append(out, filepath.Join(parent, name))
				break
			}
		}
	}
	return out, nil
}

// isSuffix reports whether s is what randomSuffix returns.
func isSuffix(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Recovered says what Recover did.
type Recovered struct {
	From    string   // the complete copy moved into place, or ""
	Removed []string // leftovers deleted
}

// Recover repairs what a save into the model directory dir left behind when
// the process died. If dir is missing (the kill came between moving the old
// copy aside and moving the new one in), the newest leftover copy that
// loads and verifies is moved into place. Once dir holds a model that
// verifies, every other leftover is removed; if it does not, nothing is
// touched and the load error is returned, so a damaged model is never
// covered up. A dir that is missing with no complete copy beside it is not
// an error (From stays ""). The caller must own dir (hold its lock): a
// leftover of a save running now would be taken for a dead one.
func Recover(dir string) (Recovered, error) {
	var r Recovered
	dir = filepath.Clean(dir)
	left, err := Leftovers(dir)
	if err != nil || len(left) == 0 {
		return r, err
	}
	exists, _, err := dirState(dir)
	if err != nil {
		return r, err
	}
	if !exists {
		best := ""
		for _, p := range completeCopies(left) { // newest first
			if _, err := Load(p); err == nil {
				best = p
				break
			}
		}
		if best == "" {
			return r, nil
		}
		if err := rename(best, dir); err != nil {
			return r, fmt.Errorf("%s: recovering the complete copy %s: %w", dir, best, err)
		}
		if err := syncDir(filepath.Dir(dir)); err != nil {
			return r, fmt.Errorf("%s: recovered from %s, but syncing its parent failed: %w", dir, best, err)
		}
		r.From = best
		left = slices.DeleteFunc(left, func(p string) bool { return p == best })
	} else if _, err := Load(dir); err != nil {
		return r, err
	}
	for _, p := range left {
		if err := os.RemoveAll(p); err != nil {
			return r, fmt.Errorf("removing the leftover %s: %w", p, err)
		}
		r.Removed = append(r.Removed, p)
	}
	return r, nil
}

// completeCopies are the leftovers of left whose writing finished (their
// config.json, written last, is there), newest first.
func completeCopies(left []string) []string {
	type copyAt struct {
		path string
		at   time.Time
	}
	var cs []copyAt
	for _, p := range left {
		if st, err := os.Stat(filepath.Join(p, ConfigFile)); err == nil && st.Mode().IsRegular() {
			cs = append(cs, copyAt{p, st.ModTime()})
		}
	}
	slices.SortStableFunc(cs, func(a, b copyAt) int { return b.at.Compare(a.at) })
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.path
	}
	return out
}

// InterruptedCopy returns the newest copy of dir that an interrupted save
// left complete beside it (not yet verified: Recover does that).
func InterruptedCopy(dir string) (string, bool) {
	left, err := Leftovers(dir)
	if err != nil {
		return "", false
	}
	if cs := completeCopies(left); len(cs) > 0 {
		return cs[0], true
	}
	return "", false
}

// RemoveLeftovers removes what interrupted saves into dir left beside it.
func RemoveLeftovers(dir string) error {
	left, err := Leftovers(dir)
	if err != nil {
		return err
	}
	for _, p := range left {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("removing the leftover %s: %w", p, err)
		}
	}
	return nil
}

// missingHint explains a missing model directory that an interrupted save
// left as leftover copies, or returns "".
func missingHint(dir string) string {
	if p, ok := InterruptedCopy(dir); ok {
		return fmt.Sprintf("; a save into it was interrupted and left %s (train --resume recovers it; or check it and rename it to %s)", p, filepath.Base(dir))
	}
	return ""
}
