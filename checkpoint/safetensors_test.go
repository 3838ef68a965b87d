package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// rawFile assembles a safetensors file from a literal header and data, so
// tests can build any malformed file they need.
func rawFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func encode(t *testing.T, ts map[string]*tensor.Tensor, meta map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSafetensors(&b, ts, meta); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameTensors compares shapes and bit patterns (so NaN payloads and -0
// count), not float equality.
func sameTensors(t *testing.T, got, want map[string]*tensor.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Fatalf("tensor %q missing", name)
		}
		if !tensor.SameShape(g.Shape, w.Shape) && !(len(g.Shape) == 0 && len(w.Shape) == 0) {
			t.Fatalf("tensor %q shape %v, want %v", name, g.Shape, w.Shape)
		}
		if len(g.Data) != len(w.Data) {
			t.Fatalf("tensor %q has %d values, want %d", name, len(g.Data), len(w.Data))
		}
		for i := range w.Data {
			if math.Float32bits(g.Data[i]) != math.Float32bits(w.Data[i]) {
				t.Fatalf("tensor %q[%d] = %v, want %v (bitwise)", name, i, g.Data[i], w.Data[i])
			}
		}
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	nanPayload := math.Float32frombits(0x7fc00123)
	cases := []struct {
		name    string
		tensors map[string]*tensor.Tensor
		meta    map[string]string
	}{
		{"empty", map[string]*tensor.Tensor{}, nil},
		{"scalar", map[string]*tensor.Tensor{"s": tensor.Scalar(3.5)}, nil},
		{"zero-size", map[string]*tensor.Tensor{"z": tensor.New(0, 3), "a": tensor.From([]float32{1}, 1)}, nil},
		{"special-values", map[string]*tensor.Tensor{"x": tensor.From([]float32{
			float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), nanPayload,
			math.SmallestNonzeroFloat32, math.MaxFloat32, -1.25e-20,
		}, 7)}, nil},
		{"several-with-meta", map[string]*tensor.Tensor{
			"encoder.weight":  tensor.From([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
			"bias":            tensor.From([]float32{-1, 0.5}, 2),
			"emb.é\"quoted\"": tensor.From([]float32{7, 8, 9, 10}, 2, 1, 2),
		}, map[string]string{"format": "pt", "epoch": "3", "note": "üñí \"code\"\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := encode(t, c.tensors, c.meta)
			if hl := binary.LittleEndian.Uint64(data); hl%8 != 0 {
				t.Errorf("header length %d not a multiple of 8", hl)
			}
			// Map iteration is random, so equal bytes twice in a row
			// shows the layout does not depend on it.
			for range 5 {
				if !bytes.Equal(encode(t, c.tensors, c.meta), data) {
					t.Fatal("WriteSafetensors is not deterministic")
				}
			}
			got, meta, err := ReadSafetensors(writeTemp(t, "m.safetensors", data))
			if err != nil {
				t.Fatal(err)
			}
			sameTensors(t, got, c.tensors)
			if meta == nil || len(meta) != len(c.meta) {
				t.Fatalf("metadata %v, want %v", meta, c.meta)
			}
			for k, v := range c.meta {
				if meta[k] != v {
					t.Errorf("metadata %q = %q, want %q", k, meta[k], v)
				}
			}
		})
	}
}

// TestSafetensorsLayout pins the byte layout the format prescribes, so a
// writer bug that its own reader would forgive still fails.
func TestSafetensorsLayout(t *testing.T) {
	data := encode(t, map[string]*tensor.Tensor{
		"b": tensor.From([]float32{3}, 1),
		"a": tensor.From([]float32{1, 2}, 2, 1),
	}, map[string]string{"k": "v"})
	n := binary.LittleEndian.Uint64(data)
	header := string(data[8 : 8+n])
	want := `{"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`
	if strings.TrimRight(header, " ") != want {
		t.Errorf("header\n%s\nwant\n%s", header, want)
	}
	if !bytes.Equal(data[8+n:], f32bytes(1, 2, 3)) {
		t.Errorf("data section % x, want tensors in name order, little-endian", data[8+n:])
	}
}

func TestReadSafetensorsConvertsDtypes(t *testing.T) {
	u16 := func(v ...uint16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], x)
		}
		return b
	}
	f64 := func(v ...float64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		return b
	}
	inf := float32(math.Inf(1))
	cases := []struct {
		dtype string
		data  []byte
		want  []float32
	}{
		// 1, -2, max half, smallest subnormal, largest subnormal, +Inf, -0, 1/3 rounded to half
		{"F16", u16(0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0x8000, 0x3555),
			[]float32{1, -2, 65504, 1.0 / (1 << 24), 1023.0 / (1 << 24), inf, float32(math.Copysign(0, -1)), 0.333251953125}},
		// 1, -3, pi rounded to bfloat16, +Inf
		{"BF16", u16(0x3f80, 0xc040, 0x4049, 0x7f80), []float32{1, -3, 3.140625, inf}},
		// rounding to float32, overflow to Inf, underflow to 0
		{"F64", f64(0.1, -2.5, 1e300, 1e-300), []float32{0.1, -2.5, inf, 0}},
	}
	for _, c := range cases {
		t.Run(c.dtype, func(t *testing.T) {
			n := len(c.want)
			h := `{"x":{"dtype":"` + c.dtype + `","shape":[` + itoa(n) + `],"data_offsets":[0,` + itoa(len(c.data)) + `]}}`
			got, _, err := ReadSafetensors(writeTemp(t, "x.safetensors", rawFile(h, c.data)))
			if err != nil {
				t.Fatal(err)
			}
			sameTensors(t, got, map[string]*tensor.Tensor{"x": tensor.From(c.want, n)})
		})
	}
	// NaN keeps being NaN through each conversion.
	for _, c := range []struct {
		dtype string
		data  []byte
	}{{"F16", u16(0x7e00)}, {"BF16", u16(0x7fc0)}, {"F64", f64(math.NaN())}} {
		h := `{"x":{"dtype":"` + c.dtype + `","shape":[1],"data_offsets":[0,` + itoa(len(c.data)) + `]}}`
		got, _, err := ReadSafetensors(writeTemp(t, "nan.safetensors", rawFile(h, c.data)))
		if err != nil || !math.IsNaN(float64(got["x"].Data[0])) {
			t.Errorf("%s NaN: got %v, %v", c.dtype, got, err)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestReadSafetensorsRejects(t *testing.T) {
	ok := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"too-short", []byte{1, 2, 3}, "truncated"},
		{"header-longer-than-file", append(binary.LittleEndian.AppendUint64(nil, 1<<40), "{}"...), "header length 1099511627776 exceeds"},
		{"invalid-json", rawFile(`{"a":`, nil), "invalid JSON"},
		{"not-an-object", rawFile(`[1,2]`, nil), "not an object"},
		{"trailing-json", rawFile(`{} {}`, nil), "data after the header object"},
		{"unsupported-dtype", rawFile(`{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8)), `"a" has dtype I64`},
		{"missing-field", rawFile(`{"a":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), "missing data_offsets"},
		{"null-shape", rawFile(`{"a":{"dtype":"F32","shape":null,"data_offsets":[0,4]}}`, make([]byte, 4)), "missing shape"},
		{"negative-dim", rawFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), `tensor "a"`},
		{"three-offsets", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 8)), "has 3 values"},
		{"end-before-begin", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`, make([]byte, 4)), "end before"},
		{"shape-mismatch", rawFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "needs 3×4"},
		{"shape-overflow", rawFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, make([]byte, 8)), "too large"},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "overlaps"},
		{"gap", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "gap"},
		{"truncated-data", rawFile(ok, make([]byte, 5)), "truncated: header says 8 bytes of data, file has 5"},
		{"offset-beyond-file", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 4)), "truncated"},
		{"trailing-data", rawFile(ok, make([]byte, 12)), "4 trailing bytes"},
		{"duplicate-tensor", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), `"a" appears twice`},
		{"metadata-not-strings", rawFile(`{"__metadata__":{"k":1}}`, nil), "__metadata__ must map strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, "model.safetensors", c.file)
			_, _, err := ReadSafetensors(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q should name %s and say %q", err, path, c.want)
			}
		})
	}
}

func TestReadSafetensorsNotAFile(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{dir, filepath.Join(dir, "missing.safetensors")} {
		if _, _, err := ReadSafetensors(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("ReadSafetensors(%s): error %v, want one naming it", p, err)
		}
	}
}

func TestWriteSafetensorsRejects(t *testing.T) {
	cases := []struct {
		name    string
		tensors map[string]*tensor.Tensor
		want    string
	}{
		{"nil-tensor", map[string]*tensor.Tensor{"a": nil}, `"a" is nil`},
		{"size-mismatch", map[string]*tensor.Tensor{"a": {Shape: []int{3}, Data: make([]float32, 2)}}, "2 values for shape [3]"},
		{"negative-dim", map[string]*tensor.Tensor{"a": {Shape: []int{-1, -2}, Data: make([]float32, 2)}}, "shape [-1 -2]"},
		{"reserved-name", map[string]*tensor.Tensor{"__metadata__": tensor.New(1)}, "reserved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteSafetensors(&b, c.tensors, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if b.Len() != 0 {
				t.Fatalf("wrote %d bytes before failing", b.Len())
			}
		})
	}
}

// TestReadSafetensorsTruncatedEverywhere cuts a valid file at every length:
// each must give an error, never a panic or a silently short tensor.
func TestReadSafetensorsTruncatedEverywhere(t *testing.T) {
	data := encode(t, map[string]*tensor.Tensor{
		"a": tensor.From([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
		"b": tensor.From([]float32{7}, 1),
	}, map[string]string{"k": "v"})
	dir := t.TempDir()
	for n := 0; n < len(data); n++ {
		p := filepath.Join(dir, "cut.safetensors")
		if err := os.WriteFile(p, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadSafetensors(p); err == nil {
			t.Fatalf("file cut to %d of %d bytes read without error", n, len(data))
		}
	}
}

func FuzzReadSafetensors(f *testing.F) {
	var b bytes.Buffer
	WriteSafetensors(&b, map[string]*tensor.Tensor{
		"a": tensor.From([]float32{1, 2, 3, 4}, 2, 2), "b": tensor.Scalar(5),
	}, map[string]string{"k": "v"})
	f.Add(b.Bytes())
	f.Add(rawFile(`{"x":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}`, []byte{0, 0x3c, 0, 0x7c}))
	f.Add(rawFile(`{"x":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]},"y":{"dtype":"F64","shape":[1],"data_offsets":[2,10]}}`, make([]byte, 10)))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[0,9],"data_offsets":[0,0]}}`, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, meta, err := decodeSafetensors(bytes.NewReader(data), int64(len(data)), "fuzz")
		if err != nil {
			return
		}
		// Whatever was accepted must survive a write and re-read intact.
		var b bytes.Buffer
		if err := WriteSafetensors(&b, ts, meta); err != nil {
			t.Fatalf("accepted input cannot be written back: %v", err)
		}
		ts2, _, err := decodeSafetensors(bytes.NewReader(b.Bytes()), int64(b.Len()), "again")
		if err != nil {
			t.Fatalf("re-reading written file: %v", err)
		}
		sameTensors(t, ts2, ts)
	})
}
