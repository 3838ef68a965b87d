package attack

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// BuildNearest computes the substitutes of the first queries words of v
// (the model vocabulary; the rest of v are further candidates): each one's
// k nearest words in vs with cosine ≥ cos. With cacheDir the table is
// cached there under a name that digests everything it depends on, and
// read back next time. vecName names the vectors in descriptions; log
// (or nil) gets a line on the work done.
func BuildNearest(vs *text.Vectors, v *text.Vocab, queries, k int, cos float64, vecName, cacheDir string, log io.Writer) (*NearestSet, error) {
	if log == nil {
		log = io.Discard
	}
	stderr := log
	compute := func() (*lexicon.Neighbors, error) {
		start := time.Now()
		var words []string
		for id := int32(text.UnkID) + 1; int(id) < queries; id++ {
			words = append(words, v.Word(id))
		}
		nb := lexicon.NearestNeighbors(vs, v, k, float32(cos), words)
		fmt.Fprintf(stderr, "nearest neighbours: %d words, %d pairs (k=%d, cos ≥ %g) in %.1fs\n",
			nb.Len(), nb.Edges(), k, cos, time.Since(start).Seconds())
		return nb, nil
	}
	var nb *lexicon.Neighbors
	var err error
	if cacheDir == "" {
		nb, err = compute()
	} else {
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("neighbour cache: %w", err)
		}
		path := filepath.Join(cacheDir, nearestKey(vs, v, queries, k, cos)+".json")
		if _, statErr := os.Stat(path); statErr == nil {
			fmt.Fprintf(stderr, "nearest neighbours: cached in %s\n", path)
		}
		nb, err = lexicon.CachedNeighbors(path, compute)
	}
	if err != nil {
		return nil, err
	}
	return &NearestSet{Source: nb, K: k, MinCos: cos, Vectors: vecName}, nil
}

// nearestKey names everything the table depends on: the vocabulary, how
// many of its words are queries, the vectors read for it, k and the
// threshold.
func nearestKey(vs *text.Vectors, v *text.Vocab, queries, k int, cos float64) string {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v.Len()))
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(queries))
	h.Write(b[:])
	for id := 0; id < v.Len(); id++ {
		io.WriteString(h, v.Word(int32(id)))
		h.Write([]byte{0})
	}
	binary.LittleEndian.PutUint64(b[:], uint64(vs.Dim))
	h.Write(b[:])
	for _, f := range vs.Found {
		if f {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	buf := make([]byte, 4*vs.Dim)
	for r := 0; r+vs.Dim <= len(vs.Data) && vs.Dim > 0; r += vs.Dim {
		for i, x := range vs.Data[r : r+vs.Dim] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		h.Write(buf)
	}
	return fmt.Sprintf("knn-%s-k%d-cos%s", hex.EncodeToString(h.Sum(nil))[:16], k, strconv.FormatFloat(cos, 'g', -1, 64))
}
