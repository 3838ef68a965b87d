package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/textarmor/textarmor/tensor"
)

// metadataKey is the reserved header entry holding string metadata.
const metadataKey = "__metadata__"

// maxHeaderLen bounds the JSON header, as the reference implementation does
// (100 MB), so a corrupt length cannot make us allocate gigabytes.
const maxHeaderLen = 100 << 20

// chunkBytes is the size of the scratch buffer used to convert tensor data;
// tensors larger than this are streamed through it rather than copied whole.
const chunkBytes = 1 << 16

// dtypeSize gives the element size of every dtype ReadSafetensors converts.
var dtypeSize = map[string]int{"F32": 4, "F16": 2, "BF16": 2, "F64": 8}

type headerEntry struct {
	Dtype       string   `json:"dtype"`
	Shape       []uint64 `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// WriteSafetensors writes tensors (as F32) and meta in the safetensors
// format. Tensors are laid out sorted by name so equal inputs give equal
// bytes. A nil or mis-shaped tensor is an error and nothing is written.
func WriteSafetensors(w io.Writer, tensors map[string]*tensor.Tensor, meta map[string]string) error {
	names := make([]string, 0, len(tensors))
	for name, t := range tensors {
		switch {
		case name == metadataKey:
			return fmt.Errorf("safetensors: tensor name %q is reserved", name)
		case t == nil:
			return fmt.Errorf("safetensors: tensor %q is nil", name)
		case !validShape(t):
			return fmt.Errorf("safetensors: tensor %q has %d values for shape %v", name, len(t.Data), t.Shape)
		}
		names = append(names, name)
	}
	sort.Strings(names)

	// Build the header by hand: a Go map would not keep our order, and the
	// reference writer puts __metadata__ first.
	var h bytes.Buffer
	h.WriteByte('{')
	if len(meta) > 0 {
		m, err := json.Marshal(meta) // map keys come out sorted
		if err != nil {
			return fmt.Errorf("safetensors: metadata: %w", err)
		}
		h.WriteString(`"` + metadataKey + `":`)
		h.Write(m)
	}
	var off uint64
	for i, name := range names {
		t := tensors[name]
		if i > 0 || len(meta) > 0 {
			h.WriteByte(',')
		}
		k, _ := json.Marshal(name) // strings always marshal
		end := off + 4*uint64(len(t.Data))
		shape := t.Shape
		if shape == nil {
			shape = []int{} // a scalar: "shape": [] rather than null
		}
		e, _ := json.Marshal(struct {
			Dtype       string   `json:"dtype"`
			Shape       []int    `json:"shape"`
			DataOffsets []uint64 `json:"data_offsets"`
		}{"F32", shape, []uint64{off, end}})
		fmt.Fprintf(&h, "%s:%s", k, e)
		off = end
	}
	h.WriteByte('}')
	// Pad with spaces so the data section starts 8-byte aligned.
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}

	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(h.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if _, err := w.Write(h.Bytes()); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	// Convert through a fixed buffer: no second copy of a large model.
	buf := make([]byte, chunkBytes)
	for _, name := range names {
		data := tensors[name].Data
		for len(data) > 0 {
			k := min(len(data), len(buf)/4)
			for i, v := range data[:k] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			if _, err := w.Write(buf[:4*k]); err != nil {
				return fmt.Errorf("safetensors: writing %q: %w", name, err)
			}
			data = data[k:]
		}
	}
	return nil
}

func validShape(t *tensor.Tensor) bool {
	n := 1
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > math.MaxInt/d) {
			return false
		}
		n *= d
	}
	return n == len(t.Data)
}

// ReadSafetensors reads a safetensors file. F32 tensors are loaded as they
// are; F16, BF16 and F64 are converted to float32 (F64 values beyond the
// float32 range become ±Inf). Any other dtype is an error. The header is
// checked fully before data is read: offsets must lie within the file,
// tile the data section without gaps or overlap, and match each shape.
// Errors name path. The metadata map is never nil.
func ReadSafetensors(path string) (map[string]*tensor.Tensor, map[string]string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return decodeSafetensors(f, size, path)
}

// decodeSafetensors reads a safetensors stream of size bytes from r,
// consuming it exactly (so a caller may hash it on the way). name labels
// errors.
func decodeSafetensors(r io.Reader, size int64, name string) (map[string]*tensor.Tensor, map[string]string, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: "+format, append([]any{name}, args...)...)
	}
	if size < 8 {
		return nil, nil, fail("truncated: %d bytes, too short for the 8-byte header length", size)
	}
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return nil, nil, fail("reading header length: %v", err)
	}
	hlen := binary.LittleEndian.Uint64(nb[:])
	if hlen > uint64(size-8) {
		return nil, nil, fail("truncated: header length %d exceeds the %d bytes after it", hlen, size-8)
	}
	if hlen > maxHeaderLen {
		return nil, nil, fail("header length %d exceeds the %d-byte limit", hlen, maxHeaderLen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fail("reading header: %v", err)
	}
	dataLen := uint64(size-8) - hlen

	entries, names, meta, err := parseHeader(hdr)
	if err != nil {
		return nil, nil, fail("header: %v", err)
	}

	// Validate every entry before reading any data.
	order := make([]int, len(names))
	for i, n := range names {
		e := entries[n]
		order[i] = i
		es, ok := dtypeSize[e.Dtype]
		if !ok {
			return nil, nil, fail("tensor %q has dtype %s; supported: F32, F16, BF16, F64", n, e.Dtype)
		}
		if len(e.DataOffsets) != 2 {
			return nil, nil, fail("tensor %q: data_offsets has %d values, want 2", n, len(e.DataOffsets))
		}
		numel, ok := checkedNumel(e.Shape)
		if !ok {
			return nil, nil, fail("tensor %q: shape %v is too large", n, e.Shape)
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if end < b {
			return nil, nil, fail("tensor %q: data_offsets [%d, %d] end before they begin", n, b, end)
		}
		if numel > math.MaxUint64/uint64(es) || end-b != numel*uint64(es) {
			return nil, nil, fail("tensor %q: data_offsets [%d, %d] span %d bytes, but %s shape %v needs %d×%d",
				n, b, end, end-b, e.Dtype, e.Shape, numel, es)
		}
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := entries[names[order[i]]], entries[names[order[j]]]
		if a.DataOffsets[0] != b.DataOffsets[0] {
			return a.DataOffsets[0] < b.DataOffsets[0]
		}
		return a.DataOffsets[1] < b.DataOffsets[1]
	})
	// Sorted by start, the tensors must tile [0, total) exactly: anything
	// else is an overlap or a hole, which the format forbids.
	var total uint64
	for _, i := range order {
		e := entries[names[i]]
		if e.DataOffsets[0] != total {
			what := "a gap before it"
			if e.DataOffsets[0] < total {
				what = "overlaps the previous tensor"
			}
			return nil, nil, fail("tensor %q: data_offsets [%d, %d]: %s (expected it to begin at %d)",
				names[i], e.DataOffsets[0], e.DataOffsets[1], what, total)
		}
		total = e.DataOffsets[1]
	}
	if total > dataLen {
		return nil, nil, fail("truncated: header says %d bytes of data, file has %d", total, dataLen)
	}
	if total < dataLen {
		return nil, nil, fail("%d trailing bytes after the %d bytes of tensor data", dataLen-total, total)
	}

	out := make(map[string]*tensor.Tensor, len(names))
	br := bufio.NewReaderSize(r, chunkBytes)
	buf := make([]byte, chunkBytes)
	for _, i := range order {
		n := names[i]
		e := entries[n]
		shape := make([]int, len(e.Shape))
		for j, d := range e.Shape {
			shape[j] = int(d) // checkedNumel and the size bound keep this in range
		}
		es := dtypeSize[e.Dtype]
		t := tensor.New(shape...)
		for done := 0; done < len(t.Data); {
			k := min(len(t.Data)-done, len(buf)/es)
			chunk := buf[:k*es]
			if _, err := io.ReadFull(br, chunk); err != nil {
				return nil, nil, fail("reading tensor %q: %v", n, err)
			}
			decode(e.Dtype, chunk, t.Data[done:done+k])
			done += k
		}
		out[n] = t
	}
	return out, meta, nil
}

// parseHeader decodes the header object token by token so that duplicate
// names (which a map would silently merge) are caught. It returns entries
// and their names in file order.
func parseHeader(hdr []byte) (map[string]headerEntry, []string, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, nil, errors.New("invalid JSON: not an object")
	}
	entries := map[string]headerEntry{}
	var names []string
	meta := map[string]string{}
	seenMeta := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("invalid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, nil, errors.New("invalid JSON: expected a key")
		}
		if key == metadataKey {
			if seenMeta {
				return nil, nil, nil, fmt.Errorf("%s appears twice", metadataKey)
			}
			seenMeta = true
			var m map[string]string
			if err := dec.Decode(&m); err != nil {
				return nil, nil, nil, fmt.Errorf("%s must map strings to strings: %v", metadataKey, err)
			}
			for k, v := range m {
				meta[k] = v
			}
			continue
		}
		if _, dup := entries[key]; dup {
			return nil, nil, nil, fmt.Errorf("tensor %q appears twice", key)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, nil, fmt.Errorf("invalid JSON: %v", err)
		}
		var e headerEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, nil, nil, fmt.Errorf("tensor %q: %v", key, err)
		}
		var present map[string]json.RawMessage
		_ = json.Unmarshal(raw, &present) // raw is known to be an object now
		for _, f := range []string{"dtype", "shape", "data_offsets"} {
			if v, ok := present[f]; !ok || string(v) == "null" {
				return nil, nil, nil, fmt.Errorf("tensor %q: missing %s", key, f)
			}
		}
		entries[key] = e
		names = append(names, key)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, nil, nil, fmt.Errorf("invalid JSON: %v", err)
	}
	// Only the space padding may follow the object.
	if len(bytes.Trim(hdr[dec.InputOffset():], " \t\r\n")) != 0 {
		return nil, nil, nil, errors.New("invalid JSON: data after the header object")
	}
	return entries, names, meta, nil
}

// checkedNumel multiplies a shape, reporting false on overflow or on a
// dimension that cannot be an int.
func checkedNumel(shape []uint64) (uint64, bool) {
	n := uint64(1)
	for _, d := range shape {
		if d > math.MaxInt { // must convert to int
			return 0, false
		}
		if d != 0 && n > math.MaxInt/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// decode converts little-endian elements of dtype in src to float32 in dst.
func decode(dtype string, src []byte, dst []float32) {
	switch dtype {
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case "F64":
		for i := range dst {
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
		}
	case "BF16":
		// bfloat16 is the top half of a float32.
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
		}
	case "F16":
		for i := range dst {
			dst[i] = halfToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		panic("checkpoint: decode of unvalidated dtype " + dtype)
	}
}

// halfToFloat32 converts an IEEE 754 binary16 value exactly (every half is
// representable as a float32), including subnormals, infinities and NaNs.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN; keep the payload
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp != 0: // normal: rebias 15 → 127
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	default: // subnormal: mant × 2^-24, exact in float32
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
}

// openRegular opens path for reading and returns its size, refusing
// anything but a regular file (a directory or device would decode as junk).
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", path)
	}
	return f, st.Size(), nil
}
