package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockDir creates dir if needed and claims it for this process, so that
// two runs writing the same output folder (result CSVs appended row by
// row, models, tables) fail fast instead of corrupting each other. It
// creates dir/.lock holding the process id, or fails naming the process
// that holds it. A lock left by a process that no longer runs (a killed
// run, which then resumes) is taken over. The returned function releases
// the lock.
func LockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return lock(filepath.Join(dir, ".lock"), dir)
}

// LockOutput claims an output that is replaced or appended to as a whole
// (a model directory swapped in by rename, a results CSV) through the
// sibling file out+".lock", as LockDir does for a folder.
func LockOutput(out string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	return lock(filepath.Clean(out)+".lock", out)
}

// lock creates the lock file path for what (named in errors).
func lock(path, what string) (unlock func(), err error) {
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_, werr := fmt.Fprintf(f, "%d\n", os.Getpid())
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return nil, werr
			}
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		raw, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, err
		}
		pid, perr := strconv.Atoi(strings.TrimSpace(string(raw)))
		if perr == nil && processAlive(pid) {
			return nil, fmt.Errorf("%s is in use by process %d (another run writing the same output): wait for it, stop it, or choose another output (if no such run exists, remove %s)", what, pid, path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("cannot lock %s: %s keeps changing", what, path)
}
