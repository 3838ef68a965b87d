// Package jsonl keeps resumable logs: one JSON value per line, each
// fsynced, so that a stop loses at most the line being written.
package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// Scan calls line for each complete line of data (numbered from
// 1) and returns the byte length of the complete lines: a last line cut
// short by an interrupted write is dropped, not reported.
func Scan(data []byte, line func(n int, raw []byte) error) (good int64, err error) {
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

// Writer appends values as JSON lines, each fsynced; safe for
// concurrent use.
type Writer struct {
	mu sync.Mutex
	f  *os.File
}

// Open opens the log at path for appending after its first good
// bytes (the complete lines Scan counted; a torn last line is cut
// off), or, with good 0, starts it afresh with header as its first line.
func Open(path string, good int64, header any) (*Writer, error) {
	flags := os.O_WRONLY | os.O_CREATE
	if good == 0 {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if err != nil {
		return nil, err
	}
	l := &Writer{f: f}
	if good > 0 {
		if err = f.Truncate(good); err == nil {
			_, err = f.Seek(good, io.SeekStart)
		}
	} else {
		err = l.Write(header)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// Write appends v as one JSON line and syncs it.
func (l *Writer) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return l.f.Sync()
}

// Close closes the file.
func (l *Writer) Close() error { return l.f.Close() }
