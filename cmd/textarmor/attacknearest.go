package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// nearestFlags are --nn-k and --nn-cos: the candidate sets built from
// --vectors for the paper-protocol textfooler, ga and pso.
type nearestFlags struct {
	k   int
	cos float64
	// set records which of the two were given on the command line.
	kSet, cosSet bool
}

func (nf *nearestFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&nf.k, "nn-k", 50, "with --vectors: substitutes are each word's nn-k nearest vocabulary words (textfooler, pso, iga, hla; ga: 8 unless given)")
	fs.Float64Var(&nf.cos, "nn-cos", 0.5, "with --vectors: ... with cosine ≥ nn-cos (ga, iga: 0.75, i.e. squared distance ≤ 0.5 for unit vectors, unless given)")
}

// resolve applies the recipe's own values where the flags were not given.
func (nf *nearestFlags) resolve(fs *flag.FlagSet, recipe string) error {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nn-k":
			nf.kSet = true
		case "nn-cos":
			nf.cosSet = true
		}
	})
	// Alzantot's GA: the 8 nearest with squared distance ≤ 0.5 (cosine ≥
	// 0.75 on unit vectors); IGA: the 50 nearest with the same bound.
	switch recipe {
	case "ga":
		if !nf.kSet {
			nf.k = 8
		}
		if !nf.cosSet {
			nf.cos = 0.75
		}
	case "iga":
		if !nf.cosSet {
			nf.cos = 0.75
		}
	}
	if nf.k < 1 || nf.cos < -1 || nf.cos > 1 || math.IsNaN(nf.cos) {
		return usageError{fmt.Errorf("--nn-k must be ≥ 1 and --nn-cos in [-1, 1]")}
	}
	return nil
}

// usesNearest reports whether a recipe under a protocol takes its
// substitutes from --vectors when they are given.
func usesNearest(recipe, protocol string) bool {
	switch recipe {
	case "textfooler", "ga", "pso", "iga", "hla":
		return protocol != attack.ProtocolFTML
	}
	return false
}

// nearestKey names everything the table depends on: the vocabulary, the
// vectors read for it, k and the threshold.
func nearestKey(vs *text.Vectors, v *text.Vocab, k int, cos float64) string {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v.Len()))
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

// nearestCacheDir is where the table is cached: next to --out, or else in
// the user cache directory ("" when there is none).
func nearestCacheDir(out string) string {
	if out != "" {
		return filepath.Dir(out)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "textarmor", "neighbors")
}

// buildNearest computes (or loads from the cache) the nearest-neighbour
// substitutes of the model vocabulary in vs.
func buildNearest(vs *text.Vectors, v *text.Vocab, vecName string, nf nearestFlags, cacheDir string, stderr io.Writer) (*attack.NearestSet, error) {
	compute := func() (*lexicon.Neighbors, error) {
		start := time.Now()
		nb := lexicon.NearestNeighbors(vs, v, nf.k, float32(nf.cos), nil)
		fmt.Fprintf(stderr, "nearest neighbours: %d words, %d pairs (k=%d, cos ≥ %g) in %.1fs\n",
			nb.Len(), nb.Edges(), nf.k, nf.cos, time.Since(start).Seconds())
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
		path := filepath.Join(cacheDir, nearestKey(vs, v, nf.k, nf.cos)+".json")
		if _, statErr := os.Stat(path); statErr == nil {
			fmt.Fprintf(stderr, "nearest neighbours: cached in %s\n", path)
		}
		nb, err = lexicon.CachedNeighbors(path, compute)
	}
	if err != nil {
		return nil, err
	}
	return &attack.NearestSet{Source: nb, K: nf.k, MinCos: nf.cos, Vectors: vecName}, nil
}
