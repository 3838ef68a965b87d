package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Example is one labelled text, or one labelled sentence pair.
type Example struct {
	Text  string // raw original text, not tokenised
	Label int    // index into Dataset.Classes
	// Text2 is the second text of a sentence pair (MRPC's second
	// sentence, an NLI hypothesis; Text is then the first sentence or
	// the premise); "" for single-text tasks.
	Text2 string
}

// HasPairs reports whether ex holds sentence pairs (an example with a
// Text2): only a model that reads pairs can be trained or scored on them.
func HasPairs(ex []Example) bool {
	for _, e := range ex {
		if e.Text2 != "" {
			return true
		}
	}
	return false
}

// Pairs reports whether the dataset's examples are sentence pairs.
func (d *Dataset) Pairs() bool {
	return HasPairs(d.Train) || HasPairs(d.Dev) || HasPairs(d.Test)
}

// Dataset is a labelled corpus with its splits.
type Dataset struct {
	Name    string
	Classes []string
	Train   []Example
	Dev     []Example
	Test    []Example
	// Notes records how the splits were made (seeds, hold-outs, deviations
	// from the papers) and anything skipped, for logs and reports.
	Notes []string
}

// LineError is an error about one line of an input file. Its message has the
// form "path:line: what is wrong".
type LineError struct {
	Path string
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// MaxLineBytes is the longest line a loader accepts (1 MiB). Longer lines are
// malformed: no review or sentence is that long, and it bounds memory.
const MaxLineBytes = 1 << 20

var errLineTooLong = errors.New("line longer than 1 MiB")

// openData opens path, gunzipping it when the name ends in ".gz".
func openData(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("dataset: %s: file not found", path)
		}
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return gzipFile{zr, f}, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g gzipFile) Close() error {
	err := g.Reader.Close()
	if e := g.f.Close(); err == nil {
		err = e
	}
	return err
}

// lineReader reads lines without their "\n" / "\r\n", counting them, with the
// MaxLineBytes limit. A UTF-8 byte order mark at the start of the file is
// dropped.
type lineReader struct {
	br   *bufio.Reader
	buf  []byte
	line int
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 256<<10)}
}

// next returns the next line. errLineTooLong means the line was consumed but
// is too long; io.EOF means no bytes are left. The returned slice is only
// valid until the next call.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	gotBytes := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if len(chunk) > 0 {
			gotBytes = true
		}
		if !tooLong {
			if len(lr.buf)+len(chunk) > MaxLineBytes+2 {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			if !gotBytes {
				return nil, io.EOF
			}
			break
		}
		if err != nil {
			return nil, err
		}
		break
	}
	lr.line++
	if tooLong {
		return nil, errLineTooLong
	}
	b := lr.buf
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\ufeff"))
	}
	if len(b) > MaxLineBytes {
		return nil, errLineTooLong
	}
	return b, nil
}

// eachLine calls fn for every line of path (gzip-aware). A line longer than
// MaxLineBytes is passed as tooLong with a nil b, so the caller decides
// whether that is fatal. Read errors become LineErrors; fn's errors are
// returned as they are.
func eachLine(path string, fn func(line int, b []byte, tooLong bool) error) error {
	rc, err := openData(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	lr := newLineReader(rc)
	for {
		b, err := lr.next()
		switch {
		case err == io.EOF:
			return nil
		case err == errLineTooLong:
			err = fn(lr.line, nil, true)
		case err != nil:
			return &LineError{path, lr.line + 1, "read error: " + err.Error()}
		default:
			err = fn(lr.line, b, false)
		}
		if err != nil {
			return err
		}
	}
}

// latin1Fallback returns b as a string, decoding bytes that are not valid
// UTF-8 as Latin-1 (byte value = code point), so that mostly-UTF-8 files with
// a stray Latin-1 byte (TREC) read correctly.
func latin1Fallback(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			r = rune(b[0])
		}
		sb.WriteRune(r)
		b = b[size:]
	}
	return sb.String()
}
