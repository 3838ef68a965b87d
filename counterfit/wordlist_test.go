package counterfit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/text"
)

func TestReadWordList(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v, err := ReadWordList(write("v.txt", "good\n\nFine\ngood\n  bad  \nGOOD\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v.Words(), " "); got != text.PadWord+" "+text.UnkWord+" good fine bad" {
		t.Errorf("words %q: want the reserved words, then each word once, lower-cased, in file order", got)
	}
	for body, want := range map[string]string{"good\ntwo words\n": "two.txt:2: want one word a line, got 2", "\n \n": "no words"} {
		name := "two.txt"
		if body == "\n \n" {
			name = "empty.txt"
		}
		if _, err := ReadWordList(write(name, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
	if _, err := ReadWordList(filepath.Join(dir, "missing.txt")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
