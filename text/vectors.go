package text

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/internal/quote"
)

// Vectors holds word vectors for the words of one Vocab: vectors read from
// a file (LoadVectors) or a model's embedding table (TableVectors). It is
// textarmor's one word-vector lookup: embeddings start from it, attacks
// measure word and sentence similarity with it, neighbour sets are built
// from it. (wordvec.Vectors are a trainer's output, with corpus counts.)
type Vectors struct {
	// Name says what the vectors are, for messages and recorded
	// deviations ("counter-fitted.vec", "model embedding table").
	Name string
	// Vocab is the vocabulary whose ids index the rows.
	Vocab *Vocab
	Dim   int
	// Data is Vocab.Len() rows of Dim values, row-major; row i belongs to
	// id i. Rows of words not found in the file are zero.
	Data []float32
	// Found[i] reports whether the file had a vector for id i. The PadID row
	// is never taken from the file and always stays zero.
	Found    []bool
	NumFound int
}

// Row returns the vector of id (a slice of Data, not a copy), or nil when id
// is out of range.
func (vs *Vectors) Row(id int32) []float32 {
	if id < 0 || int(id) >= len(vs.Found) {
		return nil
	}
	return vs.Data[int(id)*vs.Dim : (int(id)+1)*vs.Dim]
}

// TableVectors wraps an embedding table (vocab.Len() rows of dim values,
// not copied) as Vectors, every row present.
func TableVectors(name string, vocab *Vocab, dim int, data []float32) *Vectors {
	found := make([]bool, len(data)/max(dim, 1))
	for i := range found {
		found[i] = true
	}
	return &Vectors{Name: name, Vocab: vocab, Dim: dim, Data: data, Found: found, NumFound: len(found)}
}

// Lookup returns the vector of word (a slice of Data), or nil when the
// vocabulary does not know it, it is <pad> or <unk>, or it has no vector.
func (vs *Vectors) Lookup(word string) []float32 {
	if vs.Vocab == nil {
		return nil
	}
	id := vs.Vocab.ID(word)
	if id == PadID || id == UnkID || id < 0 || int(id) >= len(vs.Found) || !vs.Found[id] || (int(id)+1)*vs.Dim > len(vs.Data) {
		return nil
	}
	return vs.Data[int(id)*vs.Dim : (int(id)+1)*vs.Dim]
}

// FillMissing sets every row that was not found (except PadID, which stays
// zero) to values drawn from U(-scale, scale). A nil rng means a source seeded
// with 1, so the result is reproducible either way.
func (vs *Vectors) FillMissing(rng *rand.Rand, scale float32) {
	if rng == nil {
		rng = rand.New(rand.NewSource(1))
	}
	for id := range vs.Found {
		if vs.Found[id] || int32(id) == PadID {
			continue
		}
		row := vs.Data[id*vs.Dim : (id+1)*vs.Dim]
		for j := range row {
			row[j] = (2*rng.Float32() - 1) * scale
		}
	}
}

// maxVectorLine bounds one line of a vector file (a 300-d GloVe line is about
// 3 KB), so that a binary or corrupt file cannot exhaust memory.
const maxVectorLine = 16 << 20

// LoadVectors reads a text vector file and keeps the vectors of vocab's words.
//
// Formats: GloVe (word and values per line, no header), word2vec text and
// fastText .vec (a first line "count dim"). The header is recognised as a
// first line of exactly two unsigned integers, the second not 0; one whose
// dimension exceeds MaxVectorDim is an error at line 1, however many digits
// it has. A path ending in ".gz" is gunzipped.
// Fields are separated by spaces or tabs; a word may itself contain spaces
// (glove.840B has a few such lines): the last Dim fields are the vector.
//
// Lookup: a file word equal to a vocab word fills its row; otherwise a file
// word whose lower-case form equals a vocab word fills it, unless an exact
// match or an earlier case variant already did (files are sorted by
// frequency, so the most frequent variant wins). An exact match that comes
// later replaces a case-variant row.
//
// The file is streamed. Values are parsed only on lines that fill a row, so an
// unparsable number on a line that is not used is not reported; the number of
// fields is checked on every line. Errors name the file and line.
func LoadVectors(path string, vocab *Vocab) (*Vectors, error) {
	if vocab == nil || vocab.Len() == 0 {
		return nil, fmt.Errorf("text: LoadVectors %s: empty vocabulary", path)
	}
	var vs *Vectors
	err := withVectorFile(path, func(r io.Reader) (err error) {
		vs, err = readVectors(r, path, vocab)
		return err
	})
	return vs, err
}

// VectorWords lists the words of a vector file in file order (formats as
// LoadVectors; lines are checked the same way, values are not parsed).
func VectorWords(path string) ([]string, error) {
	var words []string
	err := withVectorFile(path, func(r io.Reader) error {
		_, err := scanVectors(r, path, func(_ int, word string, _ []string) error {
			words = append(words, word)
			return nil
		})
		return err
	})
	return words, err
}

// withVectorFile opens path, gunzipping a ".gz" file, for read.
func withVectorFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("text: word vectors: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("text: word vectors %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return read(r)
}

const (
	matchNone = iota
	matchFold
	matchExact
)

// MaxVectorDim bounds a vector file's dimension (published vectors have
// 50–4,096): a malformed line of 200,000 values set the dimension of a
// table that took 8 GB and minutes to fill before anything failed.
const MaxVectorDim = 10000

// maxVectorTable bounds vocabulary × dimension (1<<30 floats, 4 GB).
const maxVectorTable = 1 << 30

func readVectors(r io.Reader, path string, vocab *Vocab) (*Vectors, error) {
	n := vocab.Len()
	vs := &Vectors{Name: filepath.Base(path), Vocab: vocab, Found: make([]bool, n)}
	match := make([]uint8, n)
	dim, err := scanVectors(r, path, func(lineNo int, word string, vals []string) error {
		id, kind := int32(-1), matchNone
		if x, ok := vocab.index[word]; ok {
			id, kind = x, matchExact
		} else if x, ok := vocab.index[strings.ToLower(word)]; ok {
			id, kind = x, matchFold
		}
		if id < 0 || id == PadID || match[id] >= uint8(kind) {
			return nil
		}
		if vs.Data == nil {
			vs.Dim = len(vals)
			if float64(n)*float64(vs.Dim) > maxVectorTable {
				return fmt.Errorf("%s:%d: %d words × %d dimensions exceed the %.0f values a table may hold", path, lineNo, n, vs.Dim, float64(maxVectorTable))
			}
			vs.Data = make([]float32, n*vs.Dim)
		}
		row := vs.Data[int(id)*vs.Dim : (int(id)+1)*vs.Dim]
		for j, s := range vals {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return fmt.Errorf("%s:%d: value %d of %q: cannot parse %s as a number", path, lineNo, j+1, word, quoteField(s))
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				// ParseFloat takes "NaN" and "Inf"; such a row would make
				// every prediction on its word NaN.
				return fmt.Errorf("%s:%d: value %d of %q: %s is not a finite number", path, lineNo, j+1, word, quoteField(s))
			}
			row[j] = float32(v)
		}
		if match[id] == matchNone {
			vs.NumFound++
		}
		match[id] = uint8(kind)
		vs.Found[id] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	vs.Dim = dim
	if vs.Data == nil {
		vs.Data = make([]float32, n*vs.Dim)
	}
	return vs, nil
}

// scanVectors reads a vector file's lines and calls use with each word and
// its Dim value fields (unparsed); it returns Dim. The header is recognised
// as a first line of exactly two unsigned integers (see headerDim);
// otherwise the first line sets Dim. Errors name the file and line.
func scanVectors(r io.Reader, path string, use func(lineNo int, word string, vals []string) error) (int, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	dim := 0
	var buf []byte
	var fields []string
	lineNo := 0
	for {
		line, err := readLimitedLine(br, &buf, maxVectorLine)
		if err == io.EOF {
			break
		}
		lineNo++
		if err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, lineNo, err)
		}
		fields = splitVectorFields(fields[:0], line)
		if len(fields) == 0 {
			continue // blank line
		}
		if lineNo == 1 && len(fields) == 2 && isDigits(fields[0]) && isDigits(fields[1]) {
			d, err := headerDim(fields[0], fields[1])
			if err != nil {
				return 0, fmt.Errorf("%s:1: header \"%s %s\": %v", path, abbrevNumber(fields[0]), abbrevNumber(fields[1]), err)
			}
			if d > 0 {
				dim = d
				continue
			}
			// "N 0" is not a header but a vector line (word "N", value 0).
		}
		if dim == 0 {
			if len(fields) < 2 {
				return 0, fmt.Errorf("%s:%d: want a word and at least one value, got %d field(s)", path, lineNo, len(fields))
			}
			if len(fields)-1 > MaxVectorDim {
				return 0, fmt.Errorf("%s:%d: %d values on the first vector line, above the %d dimensions this reader accepts", path, lineNo, len(fields)-1, MaxVectorDim)
			}
			dim = len(fields) - 1
		}
		if len(fields) < dim+1 {
			return 0, fmt.Errorf("%s:%d: want %d values after the word, got %d", path, lineNo, dim, len(fields)-1)
		}
		word := fields[0]
		if len(fields) > dim+1 {
			// A word with spaces is fine; an extra number means a dim mismatch.
			wf := fields[:len(fields)-dim]
			if _, err := strconv.ParseFloat(wf[len(wf)-1], 32); err == nil {
				return 0, fmt.Errorf("%s:%d: want %d values after the word, got %d", path, lineNo, dim, len(fields)-1)
			}
			word = strings.Join(wf, " ")
		}
		if err := use(lineNo, word, fields[len(fields)-dim:]); err != nil {
			return 0, err
		}
	}
	if dim == 0 {
		return 0, fmt.Errorf("text: word vectors %s: no vectors in file", path)
	}
	return dim, nil
}

// maxVectorCount bounds the word count a header may give. The count is not
// used to allocate anything, but a number beyond it is no real count.
const maxVectorCount = 1 << 40

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// headerDim checks a header line "count dim" (both digit runs) and returns
// dim; 0 means the line is not a header. Sizes beyond the limits are
// errors, however many digits they have: a first line of two numbers is a
// header, not a vector of one value for a word that is a number.
func headerDim(count, dim string) (int, error) {
	d, err := strconv.ParseUint(dim, 10, 64)
	if err == nil && d == 0 {
		return 0, nil
	}
	if err != nil || d > MaxVectorDim {
		return 0, fmt.Errorf("dimension %s is above the %d this reader accepts", abbrevNumber(dim), MaxVectorDim)
	}
	if n, err := strconv.ParseUint(count, 10, 64); err != nil || n > maxVectorCount {
		return 0, fmt.Errorf("word count %s is above the %d this reader accepts", abbrevNumber(count), uint64(maxVectorCount))
	}
	return int(d), nil
}

// quoteField quotes a field of a vector file for a message, at most 40
// characters of it (a binary file read as text has fields of megabytes).
func quoteField(s string) string { return quote.Short(s, 40) }

// abbrevNumber shortens a long digit run for a message.
func abbrevNumber(s string) string {
	if len(s) > 24 {
		return s[:20] + fmt.Sprintf("... (%d digits)", len(s))
	}
	return s
}

func splitVectorFields(dst []string, line string) []string {
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}

var errLineTooLong = errors.New("line too long")

// readLimitedLine returns the next line without its "\n" or "\r\n". A line
// longer than limit is consumed and reported as errLineTooLong. It returns
// io.EOF only when no bytes are left.
func readLimitedLine(br *bufio.Reader, buf *[]byte, limit int) (string, error) {
	*buf = (*buf)[:0]
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(*buf)+len(chunk) > limit+2 {
				tooLong = true
				*buf = (*buf)[:0]
			} else {
				*buf = append(*buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return "", err
		}
		if err == io.EOF && len(*buf) == 0 && !tooLong && len(chunk) == 0 {
			return "", io.EOF
		}
		break
	}
	if tooLong {
		return "", errLineTooLong
	}
	b := *buf
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if len(b) > limit {
		return "", errLineTooLong
	}
	return string(b), nil
}
