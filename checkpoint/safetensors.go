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
	return ReadSafetensorsSelect(path, nil)
}

// ReadSafetensorsSelect is ReadSafetensors loading only the tensors for
// which keep returns true (all of them when keep is nil). The whole header
// is validated as ReadSafetensors does, whatever keep says, so a skipped
// tensor may have any dtype of the format (an I64 buffer, say) but must
// still be laid out correctly; a kept tensor with a dtype other than F32,
// F16, BF16 or F64 is an error, reported before any data is read.
func ReadSafetensorsSelect(path string, keep func(name string) bool) (map[string]*tensor.Tensor, map[string]string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return decodeSafetensorsSelect(f, size, path, keep)
}

// TensorInfo describes one tensor of a safetensors file as its header
// gives it.
type TensorInfo struct {
	// Dtype is the format's name for the element type: F32, F16, BF16,
	// F64, I64, U8, BOOL, ...
	Dtype string
	// Shape has one entry per dimension; a scalar has none.
	Shape []int
	// Offsets are the byte offsets [begin, end) of the tensor's data,
	// relative to the start of the data section.
	Offsets [2]uint64
}

// ReadSafetensorsHeader reads and validates a safetensors file's header
// (with the same checks as ReadSafetensors, including that the offsets tile
// the data section, but accepting every dtype of the format) without
// reading any tensor data. It returns the tensors by name and the metadata,
// which is never nil.
func ReadSafetensorsHeader(path string) (map[string]TensorInfo, map[string]string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	h, err := readSTHeader(f, size, path)
	if err != nil {
		return nil, nil, err
	}
	if err := h.checkLayout(); err != nil {
		return nil, nil, err
	}
	return h.infos(), h.meta, nil
}

// decodeSafetensors reads a safetensors stream of size bytes from r,
// consuming it exactly (so a caller may hash it on the way). name labels
// errors.
func decodeSafetensors(r io.Reader, size int64, name string) (map[string]*tensor.Tensor, map[string]string, error) {
	return decodeSafetensorsSelect(r, size, name, nil)
}

// decodeSafetensorsSelect is decodeSafetensors loading only the tensors
// keep accepts (all when keep is nil); the stream is still consumed exactly.
func decodeSafetensorsSelect(r io.Reader, size int64, name string, keep func(string) bool) (map[string]*tensor.Tensor, map[string]string, error) {
	h, err := readSTHeader(r, size, name)
	if err != nil {
		return nil, nil, err
	}
	if err := h.checkKept(keep); err != nil {
		return nil, nil, err
	}
	if err := h.checkLayout(); err != nil {
		return nil, nil, err
	}
	out, err := h.readData(r, keep)
	if err != nil {
		return nil, nil, err
	}
	return out, h.meta, nil
}

// storageSize gives the element size of every dtype of the safetensors
// format (sub-byte types excepted); dtypeSize, the ones we convert, is a
// subset. Knowing the size of a dtype we do not convert is enough to check
// its offsets, and so to skip it safely.
var storageSize = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8, "C64": 8,
}

// stHeader is a parsed safetensors header whose entries have each been
// checked on their own (dtype known, shape within range, offsets spanning
// exactly the shape's bytes), but not yet against each other or the file
// size: checkLayout does that. The split lets a caller check names and
// shapes against what it expects first, so a model of the wrong shape is
// reported as such even when its file is also cut short.
type stHeader struct {
	name    string // labels errors
	entries map[string]headerEntry
	names   []string // file order
	meta    map[string]string
	dataLen uint64 // bytes after the header
}

func (h *stHeader) fail(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{h.name}, args...)...)
}

// readSTHeader reads the header length and header from r (which must be
// at the start of the file; size is the file's size) and checks each entry.
// It leaves r at the start of the data section.
func readSTHeader(r io.Reader, size int64, name string) (*stHeader, error) {
	h := &stHeader{name: name}
	if size < 8 {
		return nil, h.fail("truncated: %d bytes, too short for the 8-byte header length", size)
	}
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return nil, h.fail("reading header length: %v", err)
	}
	hlen := binary.LittleEndian.Uint64(nb[:])
	if hlen > uint64(size-8) {
		return nil, h.fail("truncated: header length %d exceeds the %d bytes after it", hlen, size-8)
	}
	if hlen > maxHeaderLen {
		return nil, h.fail("header length %d exceeds the %d-byte limit", hlen, maxHeaderLen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, h.fail("reading header: %v", err)
	}
	h.dataLen = uint64(size-8) - hlen

	var err error
	h.entries, h.names, h.meta, err = parseHeader(hdr)
	if err != nil {
		return nil, h.fail("header: %v", err)
	}
	for _, n := range h.names {
		e := h.entries[n]
		es, ok := storageSize[e.Dtype]
		if !ok {
			return nil, h.fail("tensor %q has dtype %s, unknown to this reader; supported: F32, F16, BF16, F64", n, e.Dtype)
		}
		if len(e.DataOffsets) != 2 {
			return nil, h.fail("tensor %q: data_offsets has %d values, want 2", n, len(e.DataOffsets))
		}
		numel, ok := checkedNumel(e.Shape)
		if !ok {
			return nil, h.fail("tensor %q: shape %v is too large", n, e.Shape)
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if end < b {
			return nil, h.fail("tensor %q: data_offsets [%d, %d] end before they begin", n, b, end)
		}
		if numel > math.MaxUint64/uint64(es) || end-b != numel*uint64(es) {
			return nil, h.fail("tensor %q: data_offsets [%d, %d] span %d bytes, but %s shape %v needs %d×%d",
				n, b, end, end-b, e.Dtype, e.Shape, numel, es)
		}
	}
	return h, nil
}

// infos returns the entries as TensorInfo values.
func (h *stHeader) infos() map[string]TensorInfo {
	out := make(map[string]TensorInfo, len(h.names))
	for _, n := range h.names {
		e := h.entries[n]
		out[n] = TensorInfo{Dtype: e.Dtype, Shape: intShape(e.Shape), Offsets: [2]uint64{e.DataOffsets[0], e.DataOffsets[1]}}
	}
	return out
}

// intShape converts a shape readSTHeader has checked (every dimension and
// the product fit an int).
func intShape(s []uint64) []int {
	shape := make([]int, len(s))
	for j, d := range s {
		shape[j] = int(d)
	}
	return shape
}

// checkKept refuses a kept tensor whose dtype we cannot convert.
func (h *stHeader) checkKept(keep func(string) bool) error {
	for _, n := range h.names {
		if keep != nil && !keep(n) {
			continue
		}
		if dt := h.entries[n].Dtype; dtypeSize[dt] == 0 {
			return h.fail("tensor %q has dtype %s; supported: F32, F16, BF16, F64", n, dt)
		}
	}
	return nil
}

// order returns the entries' names sorted by data offset.
func (h *stHeader) order() []string {
	names := append([]string(nil), h.names...)
	sort.Slice(names, func(i, j int) bool {
		a, b := h.entries[names[i]], h.entries[names[j]]
		if a.DataOffsets[0] != b.DataOffsets[0] {
			return a.DataOffsets[0] < b.DataOffsets[0]
		}
		return a.DataOffsets[1] < b.DataOffsets[1]
	})
	return names
}

// checkLayout checks that the entries tile the data section exactly.
func (h *stHeader) checkLayout() error {
	// Sorted by start, the tensors must tile [0, total) exactly: anything
	// else is an overlap or a hole, which the format forbids.
	var total uint64
	for _, n := range h.order() {
		e := h.entries[n]
		if e.DataOffsets[0] != total {
			what := "a gap before it"
			if e.DataOffsets[0] < total {
				what = "overlaps the previous tensor"
			}
			return h.fail("tensor %q: data_offsets [%d, %d]: %s (expected it to begin at %d)",
				n, e.DataOffsets[0], e.DataOffsets[1], what, total)
		}
		total = e.DataOffsets[1]
	}
	if total > h.dataLen {
		return h.fail("truncated: header says %d bytes of data, file has %d", total, h.dataLen)
	}
	if total < h.dataLen {
		return h.fail("%d trailing bytes after the %d bytes of tensor data", h.dataLen-total, total)
	}
	return nil
}

// readData reads the data section from r (just past the header), decoding
// the tensors keep accepts (all when nil) and reading past the others. The
// header must have passed checkKept and checkLayout.
func (h *stHeader) readData(r io.Reader, keep func(string) bool) (map[string]*tensor.Tensor, error) {
	out := map[string]*tensor.Tensor{}
	br := bufio.NewReaderSize(r, chunkBytes)
	buf := make([]byte, chunkBytes)
	for _, n := range h.order() {
		e := h.entries[n]
		if keep != nil && !keep(n) {
			span := e.DataOffsets[1] - e.DataOffsets[0]
			if _, err := io.CopyN(io.Discard, br, int64(span)); err != nil { // span ≤ dataLen < 2^63
				return nil, h.fail("reading past tensor %q: %v", n, err)
			}
			continue
		}
		es := dtypeSize[e.Dtype]
		t := tensor.New(intShape(e.Shape)...)
		for done := 0; done < len(t.Data); {
			k := min(len(t.Data)-done, len(buf)/es)
			chunk := buf[:k*es]
			if _, err := io.ReadFull(br, chunk); err != nil {
				return nil, h.fail("reading tensor %q: %v", n, err)
			}
			decode(e.Dtype, chunk, t.Data[done:done+k])
			done += k
		}
		out[n] = t
	}
	return out, nil
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
