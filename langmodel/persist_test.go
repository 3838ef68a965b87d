package langmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// queries returns contexts and words covering seen, unseen and unknown
// n-grams.
func queries(m *Model) (ctxs [][]string, words []string) {
	words = allTokens(m)
	if len(words) > 60 {
		words = words[:60]
	}
	ctxs = [][]string{nil, {"the"}, {"the", "cat"}, {"cat", "sat"}, {"nope", "sat"}, {"sat", "nope"}}
	for i := 0; i+1 < len(m.words); i += 1 + len(m.words)/20 {
		ctxs = append(ctxs, []string{m.words[i], m.words[i+1]})
	}
	return ctxs, words
}

func TestSaveLoad(t *testing.T) {
	corpus := newGrammar(5, 50, 100, 60).corpus(3000)
	dir := t.TempDir()
	for _, order := range []int{1, 2, 3} {
		m := mustTrain(t, corpus, Options{Order: order, MinCount: 2, Label: "grammar 5"})
		p := filepath.Join(dir, "lm.bin")
		if err := m.Save(p); err != nil {
			t.Fatal(err)
		}
		l, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if l.Name() != m.Name() || l.Order() != order || l.minCount != 2 || l.Label() != "grammar 5" {
			t.Errorf("loaded %s order %d min %d, saved %s", l.Name(), l.Order(), l.minCount, m.Name())
		}
		if l.disc != m.disc {
			t.Errorf("discounts %v, saved %v", l.disc, m.disc)
		}
		ctxs, words := queries(m)
		for _, c := range ctxs {
			for _, w := range words {
				if a, b := m.Prob(c, w), l.Prob(c, w); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("order %d: P(%q|%q) %v saved, %v loaded", order, w, c, a, b)
				}
			}
		}
		for _, s := range corpus[:200] {
			for i := range s {
				if a, b := m.LogProb(s, i), l.LogProb(s, i); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("order %d: LogProb(%q, %d) %v saved, %v loaded", order, s, i, a, b)
				}
			}
		}
		// Deterministic bytes: a second save, a save of the loaded model and
		// a save of a model trained again (new map orders) all agree.
		want, _ := os.ReadFile(p)
		m2 := mustTrain(t, corpus, Options{Order: order, MinCount: 2, Label: "grammar 5"})
		for i, s := range []*Model{m, l, m2} {
			q := filepath.Join(dir, "again.bin")
			if err := s.Save(q); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(q); !bytes.Equal(got, want) {
				t.Errorf("order %d: save %d differs from the first (%d vs %d bytes)", order, i, len(got), len(want))
			}
		}
	}
	// Save is atomic: no temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"again.bin", "lm.bin"}) {
		t.Errorf("directory holds %v", names)
	}
	m := mustTrain(t, corpus[:10], Options{})
	if err := m.Save(filepath.Join(dir, "missing", "lm.bin")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("save into a missing directory: %v", err)
	}
}

// wrap gives body a valid header and checksum.
func wrap(body []byte) []byte {
	out := append([]byte(magic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[len(magic):], formatVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(body)))
	out = append(out, body...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crcTable))
}

func body(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int:
			b = binary.AppendUvarint(b, uint64(v))
		case uint64:
			b = binary.AppendUvarint(b, v)
		case string:
			b = appendString(b, v)
		}
	}
	return b
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	m := mustTrain(t, newGrammar(6, 10, 10, 10).corpus(100), Options{})
	good := m.encode()
	if _, err := decode(good); err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := slices.Clone(good)
		b[i] ^= 0x10
		return b
	}
	badVersion := slices.Clone(good)
	binary.LittleEndian.PutUint32(badVersion[len(magic):], 99)
	key3 := func(a, b, c uint64) uint64 { return a<<(2*idBits) | b<<idBits | c }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"magic prefix", []byte(magic[:5]), "truncated"},
		{"header only", good[:headerLen-3], "truncated"},
		{"short", []byte("hi"), "bad magic"},
		{"text", []byte("this is not a model file at all"), "bad magic"},
		{"gob", flip(0), "bad magic"},
		{"version", badVersion, "version 99"},
		{"no trailer", good[:len(good)-4], "truncated"},
		{"half", good[:len(good)/2], "truncated"},
		{"trailing", append(slices.Clone(good), 0), "trailing"},
		{"flipped body", flip(headerLen + 5), "checksum"},
		{"flipped crc", flip(len(good) - 1), "checksum"},
		{"huge length", func() []byte {
			b := slices.Clone(good)
			binary.LittleEndian.PutUint64(b[len(magic)+4:], math.MaxUint64)
			return b
		}(), "truncated"},
		{"order 0", wrap(body(0, 1, "", 0, 1, 1, 1)), "order 0"},
		{"order 4", wrap(body(4, 1, "", 0, 1, 1, 1)), "order 4"},
		{"min count", wrap(body(1, 0, "", 0, 1, 1, 1)), "minimum count"},
		{"word count", wrap(body(1, 1, "", 5, "a")), "word count"},
		{"unsorted words", wrap(body(1, 1, "", 2, "b", "a", 1, 3, 1)), "out of order"},
		{"duplicate words", wrap(body(1, 1, "", 2, "a", "a", 1, 3, 1)), "out of order"},
		{"marker word", wrap(body(1, 1, "", 1, EOS, 1, 3, 1)), "marker"},
		{"long word", wrap(body(1, 1, "", 1, 200)), "runs past"},
		{"no n-grams", wrap(body(1, 1, "", 1, "a", 0)), "n-gram count 0"},
		{"too many n-grams", wrap(body(1, 1, "", 1, "a", 9, 3, 1)), "n-gram count 9"},
		{"id out of range", wrap(body(1, 1, "", 1, "a", 1, 4, 1)), "impossible"},
		{"predicts bos", wrap(body(1, 1, "", 1, "a", 1, bosID, 1)), "impossible"},
		{"eos in history", wrap(body(2, 1, "", 1, "a", 1, uint64(eosID<<idBits|3), 1)), "impossible"},
		{"bos after a word", wrap(body(3, 1, "", 1, "a", 1, key3(3, bosID, 3), 1)), "impossible"},
		{"beyond 3 ids", wrap(body(3, 1, "", 1, "a", 1, uint64(1)<<63, 1)), "out of order or range"},
		{"repeated n-gram", wrap(body(1, 1, "", 1, "a", 2, 3, 1, 0, 1)), "out of order"},
		{"zero count", wrap(body(1, 1, "", 1, "a", 1, 3, 0)), "count 0"},
		{"huge count", wrap(body(1, 1, "", 1, "a", 1, 3, uint64(1)<<32)), "count 4294967296"},
		{"bad varint", wrap(append(body(1, 1, "", 1, "a", 1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)), "bad n-gram"},
		{"unread bytes", wrap(body(1, 1, "", 1, "a", 1, 3, 1, 7)), "unread"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".lm")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil {
			t.Errorf("%s: loaded", c.name)
			continue
		}
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want ErrFormat naming the file and %q", c.name, err, c.want)
		}
	}
	// A minimal valid body loads.
	if _, err := decode(wrap(body(3, 1, "", 1, "a", 1, key3(bosID, bosID, 3), 1))); err != nil {
		t.Errorf("minimal model: %v", err)
	}
	p := filepath.Join(dir, "absent.lm")
	if _, err := Load(p); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	m, err := Train(newGrammar(9, 5, 5, 5).corpus(20), Options{})
	if err != nil {
		f.Fatal(err)
	}
	good := m.encode()
	f.Add(good, false)
	f.Add(good[headerLen:len(good)-trailerLen], true)
	f.Add(good[:len(good)/2], false)
	f.Add([]byte(magic), false)
	f.Add(body(2, 1, "x", 2, "a", "b", 2, 3, 3), true)
	// Load is os.ReadFile plus decode; fuzzing decode in memory runs far
	// faster than writing a file per input (TestLoadErrors covers Load's
	// wrapping of decode's errors).
	f.Fuzz(func(t *testing.T, data []byte, asBody bool) {
		if asBody { // reach the body parser past the checksum
			data = wrap(data)
		}
		l, err := decode(data)
		if err != nil {
			return
		}
		var sum float64
		for _, w := range allTokens(l) {
			pr := l.Prob([]string{"a", "b"}, w)
			if !(pr > 0 && pr <= 1) {
				t.Fatalf("P(%q) = %v", w, pr)
			}
			sum += pr
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("probabilities sum to %v", sum)
		}
		if v := l.LogProb([]string{"a", "zz", "b"}, 1); math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("LogProb = %v", v)
		}
		if l2, err := decode(l.encode()); err != nil || l2.Name() != l.Name() {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}
