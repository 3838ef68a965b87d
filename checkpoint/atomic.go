package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// rename is os.Rename, swappable so tests can make a swap step fail.
var rename = os.Rename

// randomSuffix returns 16 hex digits for temp names; collisions are checked
// for anyway (O_EXCL, Lstat), so this only has to make them rare.
func randomSuffix() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// syncDir flushes a directory's entries (a rename is only durable once its
// directory is). Windows cannot open directories for syncing; there the
// rename is as durable as the OS makes it.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// AtomicFile is a file that appears at its path, complete, only on Commit.
// Until then it is written to a temporary file in the same directory (so the
// final rename cannot cross filesystems). The usual pattern is
//
//	f, err := CreateAtomic(path)
//	if err != nil { ... }
//	defer f.Abort() // no-op after a successful Commit
//	... write ...
//	return f.Commit()
type AtomicFile struct {
	f    *os.File
	path string
	done bool
}

// CreateAtomic starts an atomic write of path. The file gets mode 0666 less
// the umask, like os.Create.
func CreateAtomic(path string) (*AtomicFile, error) {
	return createAtomic(path, 0o666)
}

func createAtomic(path string, perm os.FileMode) (*AtomicFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp-"+randomSuffix())
		// O_EXCL: never clobber a file someone else is writing; opening
		// with perm (rather than chmod later) keeps the umask in effect.
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &AtomicFile{f: f, path: path}, nil
	}
	return nil, fmt.Errorf("%s: could not create a temporary file", path)
}

// Name returns the path the file will have after Commit.
func (a *AtomicFile) Name() string { return a.path }

// Write writes to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a.done {
		return 0, fmt.Errorf("%s: write after Commit or Abort", a.path)
	}
	return a.f.Write(p)
}

// Commit flushes the data to disk and renames it into place, replacing any
// existing file. On error the temporary file is removed and path is left as
// it was.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("%s: Commit after Commit or Abort", a.path)
	}
	a.done = true
	tmp := a.f.Name()
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", a.path, err)
	}
	// The data is in place; failing to sync the directory only weakens
	// durability across a crash, but the caller should still hear of it.
	if err := syncDir(filepath.Dir(a.path)); err != nil {
		return fmt.Errorf("%s: syncing directory: %w", a.path, err)
	}
	return nil
}

// Abort discards the temporary file. It is a no-op after Commit or Abort,
// so it can always be deferred.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	tmp := a.f.Name()
	a.f.Close()
	return os.Remove(tmp)
}

// WriteFileAtomic is os.WriteFile made atomic: readers see either the old
// file or all of data, never a partial write, even across a crash.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	a, err := createAtomic(path, perm)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return a.Commit()
}
