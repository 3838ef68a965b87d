package langmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"

	"github.com/textarmor/textarmor/checkpoint"
)

// File layout (integers little-endian, "uvarint" as in encoding/binary):
//
//	magic    8 bytes  "TAKNLM\r\n" (the CR LF catches text-mode mangling)
//	version  uint32   formatVersion
//	length   uint64   length of the body
//	body:
//	  order, minCount          uvarint
//	  label                    uvarint length + bytes
//	  word count, words        uvarint; each uvarint length + bytes, sorted
//	  n-gram count             uvarint
//	  n-grams                  uvarint key (delta from the previous key
//	                           after the first), uvarint raw count
//	crc      uint32   CRC-32C of everything before it
//
// Only the highest-order counts are stored: Load rebuilds the rest with the
// code Train uses, so a loaded model's probabilities are bit-identical to
// the saved one's.
const (
	magic         = "TAKNLM\r\n"
	formatVersion = 1
	headerLen     = len(magic) + 4 + 8
	trailerLen    = 4
)

// ErrFormat is wrapped by Load's errors for files that are not valid model
// files (wrong magic or version, truncated, corrupted).
var ErrFormat = errors.New("invalid language model file")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Save writes the model to path atomically: a temporary file in the same
// directory is renamed over path once complete, so readers never see a
// partial model. The bytes depend only on the model.
func (m *Model) Save(path string) error {
	if err := checkpoint.WriteFileAtomic(path, m.encode(), 0o666); err != nil {
		return fmt.Errorf("langmodel: saving %s: %w", path, err)
	}
	return nil
}

func (m *Model) encode() []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(m.order))
	b = binary.AppendUvarint(b, uint64(m.minCount))
	b = appendString(b, m.label)
	b = binary.AppendUvarint(b, uint64(len(m.words)))
	for _, w := range m.words {
		b = appendString(b, w)
	}
	b = binary.AppendUvarint(b, uint64(len(m.keys)))
	var prev uint64
	for i, k := range m.keys {
		b = binary.AppendUvarint(b, k-prev)
		b = binary.AppendUvarint(b, uint64(m.counts[i]))
		prev = k
	}
	out := make([]byte, 0, headerLen+len(b)+trailerLen)
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, formatVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(b)))
	out = append(out, b...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crcTable))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Load reads a model written by Save. Its errors name the file; those for
// files that exist but are not valid models wrap ErrFormat. No input makes
// it panic (FuzzLoad).
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("langmodel: %w", err) // names the path
	}
	m, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("langmodel: %s: %w: %s", path, ErrFormat, err)
	}
	return m, nil
}

// decode parses and validates a model file. The error texts are completed
// by Load.
func decode(data []byte) (*Model, error) {
	if len(data) < len(magic) {
		if string(data) == magic[:len(data)] {
			return nil, fmt.Errorf("truncated: %d bytes, shorter than the header", len(data))
		}
		return nil, errors.New("not a model file (bad magic)")
	}
	if string(data[:len(magic)]) != magic {
		return nil, errors.New("not a model file (bad magic)")
	}
	if len(data) < headerLen {
		return nil, fmt.Errorf("truncated: %d bytes, shorter than the header", len(data))
	}
	if v := binary.LittleEndian.Uint32(data[len(magic):]); v != formatVersion {
		return nil, fmt.Errorf("unsupported format version %d (this build reads %d)", v, formatVersion)
	}
	bodyLen := binary.LittleEndian.Uint64(data[len(magic)+4:])
	rest := uint64(len(data) - headerLen)
	if bodyLen > rest || rest-bodyLen < trailerLen {
		return nil, fmt.Errorf("truncated: %d bytes, the header announces a %d-byte body", len(data), bodyLen)
	}
	if rest-bodyLen > trailerLen {
		return nil, fmt.Errorf("%d bytes of trailing data", rest-bodyLen-trailerLen)
	}
	end := headerLen + int(bodyLen)
	if got, want := crc32.Checksum(data[:end], crcTable), binary.LittleEndian.Uint32(data[end:]); got != want {
		return nil, fmt.Errorf("checksum mismatch (corrupted): computed %08x, stored %08x", got, want)
	}

	d := decoder{b: data[headerLen:end]}
	order := d.uvarint("order")
	minCount := d.uvarint("minimum count")
	label := d.str("label")
	nWords := d.uvarint("word count")
	if d.err != nil {
		return nil, d.err
	}
	if order < 1 || order > MaxOrder {
		return nil, fmt.Errorf("corrupted: order %d not in 1..%d", order, MaxOrder)
	}
	if minCount < 1 || minCount > math.MaxInt32 {
		return nil, fmt.Errorf("corrupted: minimum count %d", minCount)
	}
	if nWords > maxIDs-firstWordID || nWords > uint64(len(d.b)) {
		return nil, fmt.Errorf("corrupted: word count %d", nWords)
	}
	m := &Model{order: int(order), minCount: int(minCount), label: label, words: make([]string, nWords)}
	for i := range m.words {
		w := d.str("word")
		if d.err != nil {
			return nil, d.err
		}
		if isMarker(w) || (i > 0 && w <= m.words[i-1]) {
			return nil, fmt.Errorf("corrupted: word %d (%q) is a marker or out of order", i, w)
		}
		m.words[i] = w
	}
	nKeys := d.uvarint("n-gram count")
	if d.err != nil {
		return nil, d.err
	}
	if nKeys == 0 || nKeys > uint64(len(d.b)/2) { // an n-gram takes at least 2 bytes
		return nil, fmt.Errorf("corrupted: n-gram count %d", nKeys)
	}
	nIDs := uint64(len(m.words) + firstWordID)
	limit := uint64(1)<<(idBits*order) - 1
	m.keys = make([]uint64, nKeys)
	m.counts = make([]uint32, nKeys)
	var prev uint64
	for i := range m.keys {
		delta := d.uvarint("n-gram")
		c := d.uvarint("n-gram count")
		if d.err != nil {
			return nil, d.err
		}
		if (i > 0 && delta == 0) || delta > limit-prev {
			return nil, fmt.Errorf("corrupted: n-gram %d out of order or range", i)
		}
		key := prev + delta
		if !validKey(key, int(order), nIDs) {
			return nil, fmt.Errorf("corrupted: n-gram %d has impossible word ids", i)
		}
		if c < 1 || c > math.MaxUint32 {
			return nil, fmt.Errorf("corrupted: n-gram %d has count %d", i, c)
		}
		m.keys[i], m.counts[i] = key, uint32(c)
		prev = key
	}
	if len(d.b) != d.off {
		return nil, fmt.Errorf("corrupted: %d unread body bytes", len(d.b)-d.off)
	}
	m.index()
	m.build()
	return m, nil
}

// validKey reports whether a packed n-gram could have come from Train: ids
// in range, <s> only as leading padding and never predicted, </s> only
// predicted.
func validKey(key uint64, order int, nIDs uint64) bool {
	padding := true
	for j := order - 1; j >= 0; j-- {
		id := key >> (idBits * j) & (maxIDs - 1)
		last := j == 0
		switch {
		case id >= nIDs:
			return false
		case id == bosID:
			if !padding || last {
				return false
			}
		case id == eosID && !last:
			return false
		default:
			padding = false
		}
	}
	return true
}

// decoder reads uvarints and strings, remembering the first error.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.err = fmt.Errorf("corrupted: bad %s at body offset %d", what, d.off)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) str(what string) string {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.err = fmt.Errorf("corrupted: %s length %d runs past the body", what, n)
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}
