package wordvec

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/tensor"
)

// Vectors are trained word vectors.
type Vectors struct {
	Dim int
	// Words are the vocabulary by descending corpus count (ties in byte
	// order); Counts[i] is the count of Words[i].
	Words  []string
	Counts []int64
	// Data holds len(Words) rows of Dim values, row-major: row i is the
	// vector of Words[i] (word2vec's input vectors, syn0).
	Data  []float32
	Stats Stats
	index map[string]int32 // set by Train
}

// Index returns the row of word, or -1 when it is not in the vocabulary.
// Vectors from Train look words up in a map; others scan Words.
func (v *Vectors) Index(word string) int {
	if v.index != nil {
		if i, ok := v.index[word]; ok {
			return int(i)
		}
		return -1
	}
	for i, w := range v.Words {
		if w == word {
			return i
		}
	}
	return -1
}

// Vector returns the vector of word (a slice of Data, not a copy), or nil.
func (v *Vectors) Vector(word string) []float32 {
	i := v.Index(word)
	if i < 0 {
		return nil
	}
	return v.Data[i*v.Dim : (i+1)*v.Dim]
}

// Similarity returns the cosine similarity of two words' vectors; ok is false
// when either word is not in the vocabulary.
func (v *Vectors) Similarity(a, b string) (cos float64, ok bool) {
	x, y := v.Vector(a), v.Vector(b)
	if x == nil || y == nil {
		return 0, false
	}
	return tensor.Cosine(x, y), true
}

// Neighbor is a word and its cosine similarity to a query.
type Neighbor struct {
	Word string
	Cos  float64
}

// Nearest returns the k words most similar to word by cosine, best first
// (ties by vocabulary order), without word itself; nil when word is not in
// the vocabulary. It scans every row: meant for diagnostics and tests.
func (v *Vectors) Nearest(word string, k int) []Neighbor {
	q := v.Index(word)
	if q < 0 || k <= 0 {
		return nil
	}
	x := v.Data[q*v.Dim : (q+1)*v.Dim]
	type cand struct {
		i   int
		cos float64
	}
	all := make([]cand, 0, len(v.Words)-1)
	for i := range v.Words {
		if i != q {
			all = append(all, cand{i, tensor.Cosine(x, v.Data[i*v.Dim:(i+1)*v.Dim])})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].cos > all[b].cos })
	if k > len(all) {
		k = len(all)
	}
	out := make([]Neighbor, k)
	for i := range out {
		out[i] = Neighbor{v.Words[all[i].i], all[i].cos}
	}
	return out
}

// Write writes the vectors in the word2vec text format: a line "count dim",
// then one line per word, "word v1 v2 ...", in vocabulary order. Values are
// the shortest decimals that parse back to the same float32, so text.
// LoadVectors recovers them exactly. A word containing whitespace cannot be
// written in this format and is an error.
func (v *Vectors) Write(w io.Writer) error {
	for _, word := range v.Words {
		if word == "" || strings.ContainsAny(word, " \t\n\r\v\f") {
			return fmt.Errorf("wordvec: word %q cannot be written in the word2vec text format (empty or contains whitespace)", word)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%d %d\n", len(v.Words), v.Dim)
	buf := make([]byte, 0, 16*v.Dim+64)
	for i, word := range v.Words {
		buf = append(buf[:0], word...)
		for _, x := range v.Data[i*v.Dim : (i+1)*v.Dim] {
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, float64(x), 'g', -1, 32)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
