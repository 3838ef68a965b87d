package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// Resumable runs (a round's attack, an explain pass) log each finished item
// as one JSON line, fsynced, so that a stop loses at most the line being
// written. These are the two halves every such log shares.

// scanJSONLines calls line for each complete line of data (numbered from
// 1) and returns the byte length of the complete lines: a last line cut
// short by an interrupted write is dropped, not reported.
func scanJSONLines(data []byte, line func(n int, raw []byte) error) (good int64, err error) {
	for n := 1; len(data) > 0; n++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break
		}
		if err := line(n, data[:nl]); err != nil {
			return 0, err
		}
		good += int64(nl + 1)
		data = data[nl+1:]
	}
	return good, nil
}

// jsonLinesWriter appends values as JSON lines, each fsynced; safe for
// concurrent use.
type jsonLinesWriter struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

func newJSONLinesWriter(f *os.File) *jsonLinesWriter {
	return &jsonLinesWriter{f: f, w: bufio.NewWriter(f)}
}

// openJSONLines opens the log at path for appending after its first good
// bytes (the complete lines scanJSONLines counted; a torn last line is cut
// off), or, with good 0, starts it afresh with header as its first line.
func openJSONLines(path string, good int64, header any) (*jsonLinesWriter, error) {
	flags := os.O_WRONLY | os.O_CREATE
	if good == 0 {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if err != nil {
		return nil, err
	}
	l := newJSONLinesWriter(f)
	if good > 0 {
		if err = f.Truncate(good); err == nil {
			_, err = f.Seek(good, io.SeekStart)
		}
	} else {
		err = l.write(header)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

func (l *jsonLinesWriter) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	if err := l.w.Flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

func (l *jsonLinesWriter) Close() error { return l.f.Close() }
