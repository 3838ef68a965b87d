package lexicon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/textarmor/textarmor/text"
)

const smallJSON = `{"movie": ["film", "films", "movie", "film"], "film": ["movie"],
 "the": [],
 "good": ["fine", "nice", "decent"], "zebra": ["okapi"]}`

func loadString(t *testing.T, content string) (*Neighbors, string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nbrs.json")
	writeFile(t, p, content)
	n, err := LoadNeighbors(p)
	return n, p, err
}

func TestLoadNeighbors(t *testing.T) {
	n, _, err := loadString(t, smallJSON)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Name", n.Name(), "nbrs")
	eq(t, "Words (file order)", n.Words(), []string{"movie", "film", "the", "good", "zebra"})
	// The self-edge and the repeat are dropped.
	eq(t, "movie", n.Synonyms("movie"), []string{"film", "films"})
	eq(t, "the", n.Synonyms("the"), []string(nil))
	eq(t, "unknown", n.Synonyms("cat"), []string(nil))
	if !n.Has("the") || n.Has("cat") {
		t.Error("Has wrong")
	}
	eq(t, "Len", n.Len(), 5)
	eq(t, "Edges", n.Edges(), 7)
	eq(t, "Empty", n.NumEmpty(), 1)

	empty, _, err := loadString(t, " {} \n")
	if err != nil || empty.Len() != 0 {
		t.Errorf("empty object: %v, %v", empty, err)
	}
}

func TestLoadNeighborsErrors(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"syntax", "{\"a\": [\"b\"],\n \"c\": [\"d\" \"e\"]}", ":2:"},
		{"not an object", "[\"a\"]", ":1:1 (byte 0)"},
		{"value not a list", "{\"a\": [\"b\"],\n\"c\": \"d\"}", ":2:6 (byte 18): neighbours of \"c\": want a list of strings"},
		{"non-string neighbour", "{\"a\": [\"b\",\n  3]}", ":2:3 (byte 14): neighbours of \"a\""},
		{"null", "{\"a\": null}", ":1:7"},
		{"repeated word", "{\"a\": [],\n\"a\": [\"b\"]}", ":2:1 (byte 10): word \"a\" listed twice"},
		{"trailing data", "{\"a\": []}\n{}", ":2:1 (byte 10): unexpected data after the JSON object"},
		{"truncated", "{\"a\": [\"b\",", "unexpected end of file"},
		{"empty file", "", "unexpected end of file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, p, err := loadString(t, c.content)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q: want it to name %s and contain %q", err, p, c.want)
			}
		})
	}
	_, err := LoadNeighbors(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func testVocab(t testing.TB, words ...string) *text.Vocab {
	t.Helper()
	v, err := text.NewVocab(append([]string{text.PadWord, text.UnkWord}, words...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRestrictAndCoverage(t *testing.T) {
	n, _, err := loadString(t, smallJSON)
	if err != nil {
		t.Fatal(err)
	}
	v := testVocab(t, "movie", "films", "the", "good", "cat", "okapi")
	r := n.Restrict(v)
	eq(t, "Words", r.Words(), []string{"movie", "the", "good"})
	eq(t, "movie", r.Synonyms("movie"), []string{"films"})
	eq(t, "good", r.Synonyms("good"), []string(nil))
	if !r.Has("good") {
		t.Error("Restrict dropped an entry whose list became empty")
	}
	// movie has films in v; the, good, films have none; cat and okapi have
	// no entry: 1 of 6.
	w, total := n.Coverage(v)
	if w != 1 || total != 6 {
		t.Errorf("Coverage = %d/%d, want 1/6", w, total)
	}
	// The receiver is unchanged.
	eq(t, "original movie", n.Synonyms("movie"), []string{"film", "films"})

	// Reserved words are never entries nor neighbours.
	p := NewNeighbors("p")
	p.Set(text.UnkWord, []string{"movie"})
	p.Set("movie", []string{text.PadWord, "films"})
	r = p.Restrict(v)
	eq(t, "reserved", r.Words(), []string{"movie"})
	eq(t, "reserved neighbour", r.Synonyms("movie"), []string{"films"})
}

func TestWithOptions(t *testing.T) {
	n := fixture("n", map[string][]string{
		"a": {"b", "c", "d"},
		"b": {"a"},
		"c": {},
	}, "a", "b", "c")
	k2 := n.With(NeighborOptions{MaxK: 2})
	eq(t, "MaxK a", k2.Synonyms("a"), []string{"b", "c"})
	eq(t, "MaxK edges", k2.Edges(), 3)

	s := n.With(NeighborOptions{Symmetric: true})
	eq(t, "sym words", s.Words(), []string{"a", "b", "c", "d"})
	eq(t, "sym a", s.Synonyms("a"), []string{"b", "c", "d"})
	eq(t, "sym b", s.Synonyms("b"), []string{"a"})
	eq(t, "sym c", s.Synonyms("c"), []string{"a"})
	eq(t, "sym d", s.Synonyms("d"), []string{"a"})

	// MaxK applies to the own list first; reverse edges come after it.
	ks := n.With(NeighborOptions{MaxK: 1, Symmetric: true})
	eq(t, "MaxK+sym a", ks.Synonyms("a"), []string{"b"})
	eq(t, "MaxK+sym words", ks.Words(), []string{"a", "b", "c"})
	eq(t, "MaxK+sym c", ks.Synonyms("c"), []string(nil))

	// The receiver is unchanged.
	eq(t, "original a", n.Synonyms("a"), []string{"b", "c", "d"})
	eq(t, "original words", n.Words(), []string{"a", "b", "c"})
}

func TestSaveNeighborsRoundTrip(t *testing.T) {
	n := NewNeighbors("x")
	n.Set("<unk>&co", []string{"\"quoted\"", "naïve", "tab\there"})
	n.Set("empty", nil)
	n.Set("b", []string{"a"})
	dir := t.TempDir()
	p := filepath.Join(dir, "cache.json")
	writeFile(t, p, "old content")
	if err := SaveNeighbors(p, n); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), `"<unk>&co": ["\"quoted\"", "naïve", "tab\there"]`) {
		t.Errorf("file not in the expected layout:\n%s", data)
	}
	m, err := LoadNeighbors(p)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Words", m.Words(), n.Words())
	for _, w := range n.Words() {
		eq(t, w, m.Synonyms(w), n.Synonyms(w))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := SaveNeighbors(filepath.Join(dir, "no", "such", "dir.json"), n); err == nil {
		t.Error("saving into a missing directory: no error")
	}
}

func TestCachedNeighbors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "knn.json")
	calls := 0
	compute := func() (*Neighbors, error) {
		calls++
		return fixture("computed", map[string][]string{"a": {"b"}}, "a"), nil
	}
	first, err := CachedNeighbors(p, compute)
	if err != nil {
		t.Fatal(err)
	}
	second, err := CachedNeighbors(p, compute)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "compute calls", calls, 1)
	eq(t, "names", []string{first.Name(), second.Name()}, []string{"knn", "knn"})
	eq(t, "cached a", second.Synonyms("a"), []string{"b"})

	boom := errors.New("boom")
	if _, err := CachedNeighbors(filepath.Join(t.TempDir(), "x.json"), func() (*Neighbors, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("compute error not returned: %v", err)
	}
}

// Jia et al.'s file, checked against the counts in shared/data/README.md.
func TestRealCounterfittedNeighbors(t *testing.T) {
	p := realFile(t, "counterfitted-neighbors-jia2019/counterfitted_neighbors.json")
	start := time.Now()
	n, err := LoadNeighbors(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("LoadNeighbors: %d keys in %v", n.Len(), time.Since(start))
	eq(t, "keys", n.Len(), 49975)
	eq(t, "keys without neighbours", n.NumEmpty(), 24384)
	eq(t, "directed edges", n.Edges(), 109104)
	eq(t, "substantial", n.Synonyms("substantial"),
		[]string{"sizeable", "sizable", "considerable", "significant", "momentous", "major", "large", "important"})
	for _, w := range []string{"the", "a"} {
		if n.Has(w) {
			t.Errorf("%q has an entry; Jia's file leaves it out", w)
		}
	}
	for _, w := range n.Words() {
		if l := n.Synonyms(w); len(l) > 8 {
			t.Fatalf("%q has %d neighbours, want <= 8", w, len(l))
		}
	}
	// 94,882 of the 109,104 edges have their reverse, so symmetrising adds
	// 109,104 − 94,882 = 14,222 edges.
	s := n.With(NeighborOptions{Symmetric: true})
	eq(t, "symmetric edges", s.Edges(), 109104+109104-94882)
	eq(t, "MaxK 4 edges <= 4 per word", n.With(NeighborOptions{MaxK: 4}).Edges() <= 4*n.Len(), true)
}

func BenchmarkLoadNeighbors(b *testing.B) {
	p := realFile(b, "counterfitted-neighbors-jia2019/counterfitted_neighbors.json")
	for i := 0; i < b.N; i++ {
		if _, err := LoadNeighbors(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadNeighborsDirectory: a folder given as the table is refused as
// such, not parsed as a JSON document ("byte 0: want a JSON object").
func TestLoadNeighborsDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadNeighbors(dir); err == nil || !strings.Contains(err.Error(), "is not a file") {
		t.Errorf("a folder: %v", err)
	}
}
