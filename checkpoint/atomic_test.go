package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	cases := []struct {
		name   string
		before []byte // nil: no file beforehand
		data   []byte
		perm   os.FileMode
	}{
		{"new-file", nil, []byte("hello\n"), 0o600},
		{"replace", []byte("old contents that are longer"), []byte("new"), 0o640},
		{"empty", []byte("old"), []byte{}, 0o600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "results.json")
			if c.before != nil {
				os.WriteFile(p, c.before, 0o644)
			}
			if err := WriteFileAtomic(p, c.data, c.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != string(c.data) {
				t.Fatalf("read %q, %v; want %q", got, err, c.data)
			}
			// Only a fresh file takes perm (umask can clear bits, never add).
			if st, _ := os.Stat(p); c.before == nil && st.Mode().Perm()&^c.perm != 0 {
				t.Errorf("mode %v exceeds requested %v", st.Mode().Perm(), c.perm)
			}
			if s := siblings(t, p); !slices.Equal(s, []string{"results.json"}) {
				t.Errorf("directory holds %v, want only the file", s)
			}
		})
	}
	if err := WriteFileAtomic(filepath.Join(t.TempDir(), "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestAtomicFile(t *testing.T) {
	cases := []struct {
		name   string
		commit bool
		want   string
	}{
		{"commit", true, "a,b\n1,2\n"},
		{"abort", false, "previous"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "out.csv")
			os.WriteFile(p, []byte("previous"), 0o644)
			f, err := CreateAtomic(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Abort()
			f.Write([]byte("a,b\n"))
			f.Write([]byte("1,2\n"))
			// Until Commit, readers still see the previous file.
			if got, _ := os.ReadFile(p); string(got) != "previous" {
				t.Fatalf("before commit the file reads %q", got)
			}
			if c.commit {
				err = f.Commit()
			} else {
				err = f.Abort()
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); string(got) != c.want {
				t.Fatalf("file reads %q, want %q", got, c.want)
			}
			if s := siblings(t, p); !slices.Equal(s, []string{"out.csv"}) {
				t.Errorf("directory holds %v, want only the file", s)
			}
			// The file is finished either way: further use is refused, a
			// second Abort is the harmless deferred one.
			if _, err := f.Write([]byte("x")); err == nil {
				t.Error("Write after finishing succeeded")
			}
			if err := f.Commit(); err == nil {
				t.Error("second Commit succeeded")
			}
			if err := f.Abort(); err != nil {
				t.Errorf("Abort after finishing: %v", err)
			}
		})
	}
}

// TestAtomicFileCommitFailure: if the final rename fails, the old file is
// kept and the temporary one removed.
func TestAtomicFileCommitFailure(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	os.WriteFile(p, []byte("old"), 0o644)
	rename = func(string, string) error { return os.ErrPermission }
	defer func() { rename = os.Rename }()
	f, err := CreateAtomic(p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != p {
		t.Errorf("Name() = %q, want %q", f.Name(), p)
	}
	f.Write([]byte("new"))
	if err := f.Commit(); err == nil {
		t.Fatal("Commit succeeded despite the failed rename")
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("file reads %q, want the old contents", got)
	}
	if s := siblings(t, p); !slices.Equal(s, []string{"log.jsonl"}) {
		t.Errorf("directory holds %v, want only the file", s)
	}
}
