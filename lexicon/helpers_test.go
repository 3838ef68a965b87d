package lexicon

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/textarmor/textarmor/internal/realdata"
)

func dataDir(t testing.TB) string { return realdata.Dir(t) }

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
