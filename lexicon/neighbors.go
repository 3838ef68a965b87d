package lexicon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/text"
)

// Neighbors is a precomputed table word -> ordered neighbour list, such as
// the counter-fitted neighbour sets of Jia et al. 2019 or a table computed by
// NearestNeighbors. It implements Source. Words keep the order in which they
// were added (file order for LoadNeighbors), so every derived table and every
// saved file is deterministic.
//
// The relation is directed: v in N(w) does not imply w in N(v). In Jia's
// file 94,882 of the 109,104 edges have their reverse; see
// NeighborOptions.Symmetric.
//
// A Neighbors is not modified by any method except Set, so once built it is
// safe for concurrent readers.
type Neighbors struct {
	name  string
	words []string
	lists map[string][]string
}

// NewNeighbors returns an empty table; fill it with Set. It is meant for
// small hand-made tables (tests, fixtures) and for other builders.
func NewNeighbors(name string) *Neighbors {
	return &Neighbors{name: name, lists: map[string][]string{}}
}

// Set gives word the neighbour list nbrs (copied), replacing any earlier
// list. Occurrences of word itself and repeated neighbours are dropped, so
// Synonyms keeps its contract whatever the input.
func (n *Neighbors) Set(word string, nbrs []string) {
	if _, ok := n.lists[word]; !ok {
		n.words = append(n.words, word)
	}
	n.lists[word] = cleanList(word, nbrs)
}

func cleanList(word string, nbrs []string) []string {
	out := make([]string, 0, len(nbrs))
	for i, u := range nbrs {
		if u == word || containsStr(nbrs[:i], u) {
			continue
		}
		out = append(out, u)
	}
	return out
}

// containsStr is a linear scan: neighbour lists are short, so this beats a
// map.
func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Name identifies the table (the file name without ".json" for loaded ones).
func (n *Neighbors) Name() string { return n.name }

// Synonyms returns a copy of word's neighbour list, nearest first; nil when
// word has no entry or an empty one.
func (n *Neighbors) Synonyms(word string) []string {
	l := n.lists[word]
	if len(l) == 0 {
		return nil
	}
	return append([]string(nil), l...)
}

// Has reports whether word has an entry (possibly with no neighbours).
func (n *Neighbors) Has(word string) bool {
	_, ok := n.lists[word]
	return ok
}

// Len returns the number of entries, those with no neighbours included.
func (n *Neighbors) Len() int { return len(n.words) }

// Words returns the words that have an entry, in insertion order.
func (n *Neighbors) Words() []string { return append([]string(nil), n.words...) }

// Edges returns the number of directed (word, neighbour) pairs.
func (n *Neighbors) Edges() int {
	e := 0
	for _, l := range n.lists {
		e += len(l)
	}
	return e
}

// NumEmpty returns the number of entries with no neighbours.
func (n *Neighbors) NumEmpty() int {
	c := 0
	for _, l := range n.lists {
		if len(l) == 0 {
			c++
		}
	}
	return c
}

func (n *Neighbors) clone(name string) *Neighbors {
	c := &Neighbors{name: name, words: append([]string(nil), n.words...), lists: make(map[string][]string, len(n.lists))}
	for w, l := range n.lists {
		c.lists[w] = append([]string(nil), l...)
	}
	return c
}

// isRealWord reports whether w has its own, non-reserved id in v: the
// padding and unknown tokens are never substitution candidates.
func isRealWord(v *text.Vocab, w string) bool {
	return w != text.PadWord && w != text.UnkWord && v.Has(w)
}

// Restrict returns the table limited to a model vocabulary: entries for
// words of v only, and in each list only neighbours in v (order kept).
// Entries whose list becomes empty are kept, so Has still tells "known to
// the source but no in-vocabulary synonym" apart from "unknown".
func (n *Neighbors) Restrict(v *text.Vocab) *Neighbors {
	r := &Neighbors{name: n.name, lists: map[string][]string{}}
	for _, w := range n.words {
		if !isRealWord(v, w) {
			continue
		}
		var l []string
		for _, u := range n.lists[w] {
			if isRealWord(v, u) {
				l = append(l, u)
			}
		}
		r.words = append(r.words, w)
		r.lists[w] = l
	}
	return r
}

// Coverage counts, over the real words of v (PadWord and UnkWord excluded),
// how many have at least one neighbour that is itself in v (withSynonyms)
// out of how many there are (total): the share of the vocabulary an attack
// using this table can perturb.
func (n *Neighbors) Coverage(v *text.Vocab) (withSynonyms, total int) {
	for id := int32(text.UnkID) + 1; int(id) < v.Len(); id++ {
		w := v.Word(id)
		total++
		for _, u := range n.lists[w] {
			if isRealWord(v, u) {
				withSynonyms++
				break
			}
		}
	}
	return withSynonyms, total
}

// NeighborOptions derive a variant of a table; see With.
type NeighborOptions struct {
	// MaxK keeps only the first MaxK neighbours of each word's own list
	// (nearest first); 0 keeps them all.
	MaxK int
	// Symmetric adds the reverse of every edge: if v is a neighbour of w,
	// w becomes a neighbour of v. Reverse edges are appended after v's own
	// (truncated) list, in the table's word order, so a list can end up
	// longer than MaxK; words that only occur as neighbours get an entry,
	// added after the existing ones. Jia et al.'s relation is not symmetric,
	// so this enlarges the attack surface (in their file, 109,104 edges
	// become 123,326).
	Symmetric bool
}

// With returns the table transformed by opt (MaxK first, then Symmetric).
// The receiver is not modified.
func (n *Neighbors) With(opt NeighborOptions) *Neighbors {
	r := n.clone(n.name)
	if opt.MaxK > 0 {
		for w, l := range r.lists {
			if len(l) > opt.MaxK {
				r.lists[w] = l[:opt.MaxK:opt.MaxK]
			}
		}
	}
	if opt.Symmetric {
		type edge struct{ a, b string }
		has := make(map[edge]bool)
		fwd := make([][]string, len(r.words))
		for i, w := range r.words {
			fwd[i] = r.lists[w]
			for _, u := range fwd[i] {
				has[edge{w, u}] = true
			}
		}
		for i, w := range r.words[:len(fwd)] {
			for _, u := range fwd[i] {
				if has[edge{u, w}] {
					continue
				}
				has[edge{u, w}] = true
				if _, ok := r.lists[u]; !ok {
					r.words = append(r.words, u)
				}
				r.lists[u] = append(r.lists[u], w)
			}
		}
	}
	return r
}

// LoadNeighbors reads a neighbour table stored as one JSON object
// {"word": ["neighbour", ...], ...}, the format of Jia et al.'s
// counterfitted_neighbors.json and of SaveNeighbors. The file is decoded
// token by token (no intermediate map of interfaces), keeping file order.
// Self-edges and repeated neighbours are dropped (Jia's file has none); a
// word listed twice is an error. Errors name the file and the position as
// line:column (and byte offset).
func LoadNeighbors(path string) (*Neighbors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lexicon: neighbours: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("lexicon: neighbours: %s is not a file (a JSON object of word -> [neighbours] is expected)", path)
	}
	n := NewNeighbors(strings.TrimSuffix(filepath.Base(path), ".json"))
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<16))

	// fail reports a problem with the token that starts after byte off.
	fail := func(off int64, err error, format string, args ...any) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		} else if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			off = dec.InputOffset()
			format, args = "unexpected end of file", nil
		}
		msg := fmt.Sprintf(format, args...)
		if se != nil {
			msg += ": " + se.Error()
		}
		return fmt.Errorf("%s: %s", describeOffset(path, off), msg)
	}
	next := func() (json.Token, int64, error) {
		off := dec.InputOffset()
		t, err := dec.Token()
		return t, off, err
	}

	t, off, err := next()
	if err != nil || t != json.Delim('{') {
		return nil, fail(off, err, "want a JSON object {\"word\": [neighbours...]}")
	}
	var list []string
	for dec.More() {
		t, off, err = next()
		if err != nil {
			return nil, fail(off, err, "bad word")
		}
		word := t.(string) // object keys are always strings
		if n.Has(word) {
			return nil, fail(off, nil, "word %q listed twice", word)
		}
		if t, off, err = next(); err != nil || t != json.Delim('[') {
			return nil, fail(off, err, "neighbours of %q: want a list of strings", word)
		}
		list = list[:0]
		for dec.More() {
			t, off, err = next()
			s, ok := t.(string)
			if err != nil || !ok {
				return nil, fail(off, err, "neighbours of %q: want a list of strings", word)
			}
			list = append(list, s)
		}
		if _, off, err = next(); err != nil { // the closing ']'
			return nil, fail(off, err, "neighbours of %q", word)
		}
		n.Set(word, list)
	}
	if _, off, err = next(); err != nil { // the closing '}'
		return nil, fail(off, err, "unterminated object")
	}
	if t, off, err = next(); err != io.EOF {
		return nil, fail(off, err, "unexpected data after the JSON object")
	}
	return n, nil
}

// describeOffset turns a byte offset of path into "path:line:col (byte N)",
// pointing at the first byte after off that is not blank space or a JSON
// separator, i.e. the start of the offending token. It rereads the file,
// which only happens on the error path.
func describeOffset(path string, off int64) string {
	data, err := os.ReadFile(path)
	if err != nil || off < 0 || off > int64(len(data)) {
		return fmt.Sprintf("%s: byte %d", path, off)
	}
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%s:%d:%d (byte %d)", path, line, col, off)
}

// SaveNeighbors writes n in the format LoadNeighbors reads, one word per
// line in n's order, so a computed table can serve as a cache. The file is
// written to a temporary file in the same directory and renamed into place,
// so readers never see a partial file and a crash leaves the old one.
func SaveNeighbors(path string, n *Neighbors) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, base+".*.tmp")
	if err != nil {
		return fmt.Errorf("lexicon: save neighbours: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<16)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep words such as "<unk>" or "&" readable
	str := func(s string) {
		buf.Reset()
		enc.Encode(s) // a Go string always encodes (bad UTF-8 becomes U+FFFD)
		w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	w.WriteString("{")
	for i, word := range n.words {
		if i > 0 {
			w.WriteString(",")
		}
		w.WriteString("\n")
		str(word)
		w.WriteString(": [")
		for j, u := range n.lists[word] {
			if j > 0 {
				w.WriteString(", ")
			}
			str(u)
		}
		w.WriteString("]")
	}
	w.WriteString("\n}\n")
	if err := w.Flush(); err != nil {
		return fmt.Errorf("lexicon: save neighbours %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("lexicon: save neighbours %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("lexicon: save neighbours %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("lexicon: save neighbours: %w", err)
	}
	return nil
}

// CachedNeighbors loads the table saved at path if the file exists, and
// otherwise calls compute, saves its result there (atomically) and returns
// it. The file is trusted as is: make path name everything the table depends
// on (vectors, vocabulary, k, threshold) so that a stale cache cannot be
// picked up. Either way the table is named after the file.
func CachedNeighbors(path string, compute func() (*Neighbors, error)) (*Neighbors, error) {
	if _, err := os.Stat(path); err == nil {
		return LoadNeighbors(path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lexicon: neighbour cache: %w", err)
	}
	n, err := compute()
	if err != nil {
		return nil, err
	}
	if err := SaveNeighbors(path, n); err != nil {
		return nil, err
	}
	named := *n
	named.name = strings.TrimSuffix(filepath.Base(path), ".json")
	return &named, nil
}
