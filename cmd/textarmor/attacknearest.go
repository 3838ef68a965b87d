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
	"strings"
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
	// vocab caps the substitutes from outside the model vocabulary: the
	// first vocab words of the vectors file.
	vocab int
	// set records which of the two were given on the command line.
	kSet, cosSet bool
}

func (nf *nearestFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&nf.k, "nn-k", 50, "with --vectors: substitutes are each word's nn-k nearest vocabulary words (textfooler, pso, iga, hla; ga: 8 unless given)")
	fs.Float64Var(&nf.cos, "nn-cos", 0.5, "with --vectors: ... with cosine ≥ nn-cos (ga, iga: 0.75, i.e. squared distance ≤ 0.5 for unit vectors, unless given)")
	fs.IntVar(&nf.vocab, "nn-vocab", 100000, "with --vectors: substitutes may also be the first nn-vocab words of the vectors file that the model lacks (they reach it as UNK, as in TextAttack); 0 = model vocabulary only")
}

// resolve applies the recipe's own neighbourhood (attack.Needs) where
// --nn-k and --nn-cos were not given.
func (nf *nearestFlags) resolve(fs *flag.FlagSet, need attack.Needs) error {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nn-k":
			nf.kSet = true
		case "nn-cos":
			nf.cosSet = true
		}
	})
	if need.NearestK > 0 && !nf.kSet {
		nf.k = need.NearestK
	}
	if need.NearestK > 0 && !nf.cosSet {
		nf.cos = need.NearestCos
	}
	return checkNumbers(nf.numbers()...)
}

// numbers are the range checks of --nn-k, --nn-cos and --nn-vocab.
func (nf *nearestFlags) numbers() []numRule {
	return []numRule{
		{nf.k >= 1, "nn-k", nf.k, "at least 1"},
		{finite(nf.cos) && nf.cos >= -1 && nf.cos <= 1, "nn-cos", nf.cos, "a cosine in [-1, 1]"},
		{nf.vocab >= 0, "nn-vocab", nf.vocab, "≥ 0 (0 = model vocabulary only)"},
	}
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

// withVectorWords extends the model vocabulary mv with the first limit
// words of the vectors file that it lacks (lower-cased, in file order), the
// candidates of TextAttack's embedding swaps that reach the model as UNK.
func withVectorWords(mv *text.Vocab, path string, limit int) (*text.Vocab, error) {
	if limit == 0 {
		return mv, nil
	}
	fileWords, err := text.VectorWords(path)
	if err != nil {
		return nil, err
	}
	words := mv.Words()
	seen := make(map[string]bool, len(words))
	for _, w := range words {
		seen[w] = true
	}
	added := 0
	for _, w := range fileWords {
		if added == limit {
			break
		}
		if w = strings.ToLower(w); !seen[w] && !strings.ContainsAny(w, " \t") {
			seen[w] = true
			words = append(words, w)
			added++
		}
	}
	return text.NewVocab(words)
}

// buildNearest computes (or loads from the cache) the nearest-neighbour
// substitutes in vs of the first queries words of v (the model vocabulary;
// the rest of v are further candidates).
func buildNearest(vs *text.Vectors, v *text.Vocab, queries int, vecName string, nf nearestFlags, cacheDir string, stderr io.Writer) (*attack.NearestSet, error) {
	compute := func() (*lexicon.Neighbors, error) {
		start := time.Now()
		var words []string
		for id := int32(text.UnkID) + 1; int(id) < queries; id++ {
			words = append(words, v.Word(id))
		}
		nb := lexicon.NearestNeighbors(vs, v, nf.k, float32(nf.cos), words)
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
		path := filepath.Join(cacheDir, nearestKey(vs, v, queries, nf.k, nf.cos)+".json")
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
