// Package realdata locates the real benchmark data for tests that use it.
// Those tests run in CI, where shared/data sits beside the repository, and
// skip with the reason elsewhere.
package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir finds shared/data: $TEXTARMOR_DATA, else ../shared/data next to the
// repository root (the folder holding go.mod). It skips the test when the
// folder is missing.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("TEXTARMOR_DATA"); d != "" {
		if _, err := os.Stat(d); err != nil {
			t.Skipf("TEXTARMOR_DATA=%s: %v", d, err)
		}
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Skipf("no working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("real data: repository root (go.mod) not found")
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "data")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("real data not available (%v); set TEXTARMOR_DATA to the shared/data folder", err)
	}
	return d
}
