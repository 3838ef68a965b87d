package lexicon

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// dataDir finds shared/data: $TEXTARMOR_DATA, else ../shared/data next to the
// repository root (the folder holding go.mod). It skips the test when the
// folder is missing.
func dataDir(t testing.TB) string {
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

// realFile returns a file under shared/data, skipping when it is missing.
func realFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(dataDir(t), rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real data file missing: %v", err)
	}
	return p
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func eq(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}
