package lexicon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzLoadNeighbors: LoadNeighbors returns a table or an error (with a
// message naming the file), never panics; an accepted table has no
// self-edges or repeats, and SaveNeighbors writes it so that it loads back
// unchanged.
func FuzzLoadNeighbors(f *testing.F) {
	for _, s := range []string{
		smallJSON,
		" {} \n",
		`{"a": ["b", "a", "b"], "c": []}`,
		`{"<unk>": ["&", "\u00e9", "\ud800"], "x\u0000y": ["z"]}`,
		"{\"a\": [\"b\"],\n \"c\": [\"d\" \"e\"]}",
		`["a"]`,
		`{"a": null}`,
		`{"a": [], "a": ["b"]}`,
		"{\"a\": []}\n{}",
		`{"a": ["b",`,
		`{"a": [1]}`,
		`{"a": ["b"]]`,
		"{\"a\xff\": [\"b\xfe\"]}",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "nbrs.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := LoadNeighbors(p)
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		edges := 0
		for _, w := range n.Words() {
			l := n.Synonyms(w)
			edges += len(l)
			for i, u := range l {
				if u == w || slices.Contains(l[:i], u) {
					t.Fatalf("list of %q = %q: a self-edge or a repeat", w, l)
				}
			}
		}
		if edges != n.Edges() || n.Len() != len(n.Words()) {
			t.Fatalf("Edges %d, counted %d; Len %d, %d words", n.Edges(), edges, n.Len(), len(n.Words()))
		}
		back := filepath.Join(dir, "back.json")
		if err := SaveNeighbors(back, n); err != nil {
			t.Fatal(err)
		}
		n2, err := LoadNeighbors(back)
		if err != nil {
			t.Fatalf("re-reading the saved table: %v", err)
		}
		if !slices.Equal(n2.Words(), n.Words()) {
			t.Fatalf("words %q, saved and read back %q", n.Words(), n2.Words())
		}
		for _, w := range n.Words() {
			if !slices.Equal(n2.Synonyms(w), n.Synonyms(w)) {
				t.Fatalf("list of %q: %q, saved and read back %q", w, n.Synonyms(w), n2.Synonyms(w))
			}
		}
	})
}

// fuzzSynset is a synset of a generated dictionary: its type letter and
// words as written (markers included).
type fuzzSynset struct {
	typ   string
	words []string
}

// wordNetPOSFiles lays out data.<pos> and index.<pos> for synsets with the
// real byte offsets; index maps a lemma to synset numbers, in sense order.
func wordNetPOSFiles(letter string, synsets []fuzzSynset, index map[string][]int) (data, idx []byte) {
	var d strings.Builder
	d.WriteString(wnHeader)
	offsets := make([]int, len(synsets))
	for i, s := range synsets {
		offsets[i] = d.Len()
		fmt.Fprintf(&d, "%08d 03 %s %02x", offsets[i], s.typ, len(s.words))
		for _, w := range s.words {
			fmt.Fprintf(&d, " %s 0", w)
		}
		fmt.Fprintf(&d, " 001 @ 00000000 %s 0000 | gloss of synset %d  \n", letter, i)
	}
	lemmas := make([]string, 0, len(index))
	for l := range index {
		lemmas = append(lemmas, l)
	}
	slices.Sort(lemmas)
	var x strings.Builder
	x.WriteString(wnHeader)
	for _, l := range lemmas {
		ss := index[l]
		fmt.Fprintf(&x, "%s %s %d 1 @ %d 0", l, letter, len(ss), len(ss))
		for _, s := range ss {
			fmt.Fprintf(&x, " %08d", offsets[s])
		}
		x.WriteString("  \n")
	}
	return []byte(d.String()), []byte(x.String())
}

// fuzzWordNet is a small valid dictionary, file name -> content.
func fuzzWordNet() map[string][]byte {
	files := map[string][]byte{}
	add := func(suffix, letter string, synsets []fuzzSynset, index map[string][]int, exc string) {
		files["data."+suffix], files["index."+suffix] = wordNetPOSFiles(letter, synsets, index)
		files[suffix+".exc"] = []byte(exc)
	}
	add("noun", "n", []fuzzSynset{
		{"n", []string{"dog", "domestic_dog", "Canis_familiaris"}},
		{"n", []string{"frump", "dog"}},
		{"n", []string{"man", "adult_male"}},
		{"n", []string{"mouse"}},
		{"n", []string{"ax", "axe"}},
	}, map[string][]int{"dog": {0, 1}, "domestic_dog": {0}, "canis_familiaris": {0}, "frump": {1},
		"man": {2}, "adult_male": {2}, "mouse": {3}, "ax": {4}, "axe": {4}},
		"axes ax axis\nmice mouse\n")
	add("verb", "v", []fuzzSynset{
		{"v", []string{"chase", "dog"}},
		{"v", []string{"run", "go"}},
	}, map[string][]int{"chase": {0}, "dog": {0}, "run": {1}, "go": {1}}, "ran run\n")
	add("adj", "a", []fuzzSynset{
		{"a", []string{"good"}},
		{"s", []string{"beneficial", "good"}},
		{"a", []string{"big", "large(a)"}},
		{"s", []string{"galore(ip)", "abounding"}},
	}, map[string][]int{"good": {0, 1}, "beneficial": {1}, "big": {0, 2}, "large": {2}, "galore": {3}, "abounding": {3}},
		"better good well\n")
	add("adv", "r", []fuzzSynset{{"r", []string{"well", "good"}}}, map[string][]int{"well": {0}, "good": {0}}, "best well\n")
	return files
}

// wordNetSuffixes are the file suffixes of the parts of speech, in posOrder.
var wordNetSuffixes = []string{"noun", "verb", "adj", "adv"}

// writeWordNet writes files into a new folder, with the data, index and
// exception files of part of speech pos replaced.
func writeWordNet(t testing.TB, files map[string][]byte, pos string, data, index, exc []byte) string {
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replaceWordNetPOS(t, dir, pos, data, index, exc)
	return dir
}

// replaceWordNetPOS writes the data, index and exception files of part of
// speech pos in dir.
func replaceWordNetPOS(t testing.TB, dir, pos string, data, index, exc []byte) {
	for name, b := range map[string][]byte{"data." + pos: data, "index." + pos: index, pos + ".exc": exc} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkWordNetError checks that err names a file of dir and a line, and
// that no line of it is long: each quotes at most a short prefix of the
// bad field or line.
func checkWordNetError(t *testing.T, dir string, err error) {
	t.Helper()
	msg := err.Error()
	if strings.TrimSpace(msg) == "" {
		t.Fatalf("error with an empty message: %#v", err)
	}
	for _, l := range strings.Split(msg, "\n") {
		rest, ok := strings.CutPrefix(l, dir+string(filepath.Separator))
		if !ok {
			t.Fatalf("error line %q does not name a file of %s", l, dir)
		}
		name, rest, _ := strings.Cut(rest, ":")
		num, _, _ := strings.Cut(rest, ":")
		if _, err := strconv.Atoi(num); err != nil {
			t.Fatalf("error line %q does not give %s's line", l, name)
		}
		if len(rest) > 250 {
			t.Fatalf("error line of %d bytes: %q", len(l), l)
		}
	}
}

// FuzzOpenWordNet: OpenWordNet returns a database or an error naming the
// file and line with a short message, never panics or hangs. The data,
// index and exception files of one part of speech are fuzzed; the others
// are a valid small dictionary. An accepted database answers lookups of
// the index's lemmas and the exception list's forms.
func FuzzOpenWordNet(f *testing.F) {
	files := fuzzWordNet()
	for i, suffix := range wordNetSuffixes {
		f.Add(files["data."+suffix], files["index."+suffix], files[suffix+".exc"], uint8(i))
	}
	data, index, exc := files["data.noun"], files["index.noun"], files["noun.exc"]
	crlf := func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) }
	f.Add(crlf(data), index, exc, uint8(0))
	f.Add(data, []byte(strings.Replace(string(index), "dog n 2 1 @ 2 0", "dog n 2 1 @ 3 0", 1)), exc, uint8(0))
	f.Add(data, []byte(strings.Replace(string(index), "dog n 2", "dog n 99999999999", 1)), exc, uint8(0))
	f.Add(data, []byte("dog n 1 99999999999 @ 1 0 00000000\n"), exc, uint8(0))
	f.Add([]byte(strings.Replace(string(data), " 03 n 03 dog", " 03 v 03 dog", 1)), index, exc, uint8(0))
	f.Add([]byte(strings.Replace(string(data), " 03 n 03 dog", " 03 n ff dog", 1)), index, exc, uint8(0))
	f.Add(data, index, []byte("went\n\n \x00\xff\n"), uint8(1))
	f.Add([]byte("\xfc\xf3\xf39I\xd6}\x9b\r\xbd\"\xa3K\xa0\x95\x89H\xf4\x1fK\xba-\xf7m8\xeb\x89\xe5\xbcH3\xed\xd0\x1c\x1cn~5t-\xab\xf1<\xfb9u"), []byte{0, 1, 2}, []byte{0xff}, uint8(2))
	f.Add([]byte{}, []byte{}, []byte{}, uint8(3))
	// One folder per part of speech, holding the valid dictionary but for
	// that part's files, which each run overwrites: writing 3 files instead
	// of a folder of 12 makes runs (and so minimisation) several times
	// faster. Runs in one process are sequential, and each fuzzing process
	// has its own folders.
	dirs := map[string]string{}
	for _, suffix := range wordNetSuffixes {
		dirs[suffix] = writeWordNet(f, files, suffix, nil, nil, nil)
	}
	f.Fuzz(func(t *testing.T, data, index, exc []byte, pos uint8) {
		suffix := wordNetSuffixes[int(pos)%len(wordNetSuffixes)]
		dir := dirs[suffix]
		replaceWordNetPOS(t, dir, suffix, data, index, exc)
		wn, err := OpenWordNet(dir)
		if err != nil {
			checkWordNetError(t, dir, err)
			return
		}
		// Every form the fuzzed files name can be looked up.
		var forms []string
		for _, b := range [][]byte{index, exc} {
			for _, l := range strings.Split(string(b), "\n") {
				if w, _, _ := strings.Cut(strings.TrimLeft(l, " "), " "); w != "" && len(forms) < 50 {
					forms = append(forms, w)
				}
			}
		}
		for _, w := range append(forms, "dogs", "ran", "better") {
			for _, p := range []POS{Any, Noun, Verb, Adj, Adv} {
				for _, s := range wn.Synsets(w, p) {
					if len(s.Lemmas) == 0 {
						t.Fatalf("synset %d of %q has no lemmas", s.Offset, w)
					}
				}
				for _, s := range wn.Synonyms(w, p) {
					if strings.EqualFold(s, w) {
						t.Fatalf("Synonyms(%q) lists the word itself", w)
					}
				}
				wn.Morphy(w, p)
			}
		}
	})
}

// TestWordNetRandomBytesError: a folder of random bytes is refused with
// an error that names each file and line and quotes at most 40 characters
// (escapes included) of the bad field, not hundreds of escaped bytes.
func TestWordNetRandomBytesError(t *testing.T) {
	junk := func(seed, n int) []byte {
		b := make([]byte, n)
		x := uint32(seed)*2654435761 + 1
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
			if b[i] == '\n' || b[i] == ' ' {
				b[i] = 0xfe // one long "field" on the first line
			}
		}
		return b
	}
	dir := t.TempDir()
	for i, name := range []string{"data.noun", "index.noun", "noun.exc", "data.verb", "index.verb", "verb.exc",
		"data.adj", "index.adj", "adj.exc", "data.adv", "index.adv", "adv.exc"} {
		writeFile(t, filepath.Join(dir, name), string(junk(i, 3000)))
	}
	_, err := OpenWordNet(dir)
	if err == nil {
		t.Fatal("random bytes: no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 {
		t.Errorf("%d error lines, want one per part of speech:\n%v", len(lines), err)
	}
	for i, l := range lines {
		want := filepath.Join(dir, "data."+wordNetSuffixes[i]) + ":1: synset offset "
		rest, ok := strings.CutPrefix(l, want)
		if !ok {
			t.Errorf("error line %q, want it to start %q", l, want)
			continue
		}
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			t.Errorf("error line %q quotes nothing after the line number", l)
			continue
		}
		if s, _ := strconv.Unquote(q); utf8.RuneCountInString(q) > 42 || !strings.HasPrefix(string(junk(3*i, 3000)), s) {
			t.Errorf("error line %q quotes %s (want at most 40 characters of the line's start)", l, q)
		}
		if !strings.Contains(rest, "(3000 bytes)") || !strings.Contains(rest, "not text") || len(l) > len(want)+250 {
			t.Errorf("error line %q: want the field's length, a hint that it is not text, and a short line", l)
		}
	}
	// Exception lists quote a short prefix of the line too.
	d := tinyWordNet(t)
	long := strings.Repeat("é", 100)
	writeFile(t, filepath.Join(d, "adv.exc"), "best well\n"+long+"\n")
	_, err = OpenWordNet(d)
	want := filepath.Join(d, "adv.exc") + `:2: want an inflected form and at least one base form, got "` + strings.Repeat("é", 40) + `"... (200 bytes)`
	if err == nil || err.Error() != want {
		t.Errorf("long exception line: error\n%v\nwant\n%s", err, want)
	}
}

// TestWordNetHugeIndexCounts holds FuzzOpenWordNet's crashers: an index
// line whose synset count sized a slice (99999999999 int32s: 400 GB) or
// whose pointer count sized a loop (99999999999 empty fields: minutes).
// Both are now errors naming the file and line.
func TestWordNetHugeIndexCounts(t *testing.T) {
	files := fuzzWordNet()
	for _, c := range []struct {
		index, want string
	}{
		{strings.Replace(string(files["index.noun"]), "dog n 2", "dog n 99999999999", 1), `index.noun:7: synset count "99999999999"`},
		{"dog n 1 99999999999 @ 1 0 00000000\n", `index.noun:1: pointer count "99999999999"`},
	} {
		dir := writeWordNet(t, files, "noun", files["data.noun"], []byte(c.index), files["noun.exc"])
		done := make(chan error, 1)
		go func() {
			_, err := OpenWordNet(dir)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, c.want)) {
				t.Errorf("error %v, want one containing %s", err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: OpenWordNet still running after 10 s", c.want)
		}
	}
}
