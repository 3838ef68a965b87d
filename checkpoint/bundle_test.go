package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

func testBundle(seed float32) *Bundle {
	w := tensor.New(4, 3)
	for i := range w.Data {
		w.Data[i] = seed + float32(i)/7
	}
	return &Bundle{
		Config:  json.RawMessage(`{"model":"cnn","hidden":[100,100],"seed":` + itoa(int(seed)) + `}`),
		Vocab:   []string{"<pad>", "<unk>", "the", "naïve", "\"q\""},
		Tensors: map[string]*tensor.Tensor{"emb.weight": w, "out.bias": tensor.From([]float32{seed, -seed}, 2)},
		Meta:    map[string]string{"epoch": "2"},
	}
}

func sameBundle(t *testing.T, got, want *Bundle) {
	t.Helper()
	if string(got.Config) != string(want.Config) {
		t.Errorf("config %s, want %s", got.Config, want.Config)
	}
	if len(got.Vocab) != len(want.Vocab) || (len(want.Vocab) > 0 && !slices.Equal(got.Vocab, want.Vocab)) {
		t.Errorf("vocab %q, want %q", got.Vocab, want.Vocab)
	}
	if len(got.Meta) != len(want.Meta) {
		t.Errorf("meta %v, want %v", got.Meta, want.Meta)
	}
	for k, v := range want.Meta {
		if got.Meta[k] != v {
			t.Errorf("meta %q = %q, want %q", k, got.Meta[k], v)
		}
	}
	sameTensors(t, got.Tensors, want.Tensors)
}

// siblings lists the entries of dir's parent, to catch stray temp dirs.
func siblings(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestSaveLoadRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		b    *Bundle
	}{
		{"full", testBundle(1)},
		{"nil-config-and-vocab", &Bundle{Tensors: map[string]*tensor.Tensor{"x": tensor.Scalar(2)}}},
		{"no-tensors", &Bundle{Config: json.RawMessage(`{"a":1}`), Vocab: []string{"x"}}},
	}
	nested := filepath.Join(t.TempDir(), "runs", "exp1", "model")
	if err := Save(nested, testBundle(1)); err != nil {
		t.Fatalf("saving under missing parents: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			if err := Save(dir, c.b); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			sameBundle(t, got, c.b)
			if s := siblings(t, dir); !slices.Equal(s, []string{"model"}) {
				t.Errorf("parent holds %v, want only the model", s)
			}
		})
	}
}

func TestSaveReplacesExistingModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	for _, seed := range []float32{1, 2, 3} {
		if err := Save(dir, testBundle(seed)); err != nil {
			t.Fatal(err)
		}
		got, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		sameBundle(t, got, testBundle(seed))
		if s := siblings(t, dir); !slices.Equal(s, []string{"model"}) {
			t.Fatalf("after save %v parent holds %v", seed, s)
		}
	}
}

// TestSaveFailureKeepsOldModel makes Save fail at several points and checks
// each time that the previous model still loads and nothing is left behind.
func TestSaveFailureKeepsOldModel(t *testing.T) {
	bad := testBundle(2)
	bad.Tensors["broken"] = &tensor.Tensor{Shape: []int{5}, Data: make([]float32, 3)}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (b *Bundle, undo func())
	}{
		{"unwritable-tensor", func(t *testing.T, dir string) (*Bundle, func()) { return bad, func() {} }},
		{"invalid-config", func(t *testing.T, dir string) (*Bundle, func()) {
			b := testBundle(2)
			b.Config = json.RawMessage(`{"a":`)
			return b, func() {}
		}},
		{"swap-rename-fails", func(t *testing.T, dir string) (*Bundle, func()) {
			// Fail the rename that moves the new model in, after the old
			// one has been moved aside: Save must move it back.
			rename = func(from, to string) error {
				if to == dir && strings.Contains(from, ".tmp-") {
					return errors.New("injected rename failure")
				}
				return os.Rename(from, to)
			}
			return testBundle(2), func() { rename = os.Rename }
		}},
		{"read-only-parent", func(t *testing.T, dir string) (*Bundle, func()) {
			if os.Geteuid() == 0 {
				t.Skip("root ignores directory permissions")
			}
			parent := filepath.Dir(dir)
			if err := os.Chmod(parent, 0o555); err != nil {
				t.Fatal(err)
			}
			return testBundle(2), func() { os.Chmod(parent, 0o755) }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			if err := Save(dir, testBundle(1)); err != nil {
				t.Fatal(err)
			}
			b, undo := c.setup(t, dir)
			err := Save(dir, b)
			undo()
			if err == nil {
				t.Fatal("Save succeeded")
			}
			got, err := Load(dir)
			if err != nil {
				t.Fatalf("old model no longer loads: %v", err)
			}
			sameBundle(t, got, testBundle(1))
			if s := siblings(t, dir); !slices.Equal(s, []string{"model"}) {
				t.Errorf("parent holds %v, want only the model", s)
			}
		})
	}
}

func TestSaveRefusesToReplaceOtherThings(t *testing.T) {
	cases := []struct {
		name  string
		setup func(dir string) error
	}{
		{"file", func(dir string) error { return os.WriteFile(dir, []byte("x"), 0o644) }},
		{"dir-of-other-files", func(dir string) error {
			os.Mkdir(dir, 0o755)
			return os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("x"), 0o644)
		}},
		{"other-config", func(dir string) error {
			os.Mkdir(dir, 0o755)
			return os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"format":"other"}`), 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			if err := c.setup(dir); err != nil {
				t.Fatal(err)
			}
			before := siblings(t, dir)
			if err := Save(dir, testBundle(1)); err == nil {
				t.Fatal("Save replaced something that is not a model")
			}
			if s := siblings(t, dir); !slices.Equal(s, before) {
				t.Errorf("parent now holds %v, was %v", s, before)
			}
		})
	}
	// An empty directory is fine to replace.
	dir := filepath.Join(t.TempDir(), "model")
	os.Mkdir(dir, 0o755)
	if err := Save(dir, testBundle(1)); err != nil {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestLoadDetectsProblems(t *testing.T) {
	editFile := func(name string, f func([]byte) []byte) func(dir string) {
		return func(dir string) {
			p := filepath.Join(dir, name)
			data, err := os.ReadFile(p)
			if err != nil {
				panic(err)
			}
			if err := os.WriteFile(p, f(data), 0o644); err != nil {
				panic(err)
			}
		}
	}
	editConfig := func(f func(m map[string]any)) func(dir string) {
		return editFile(ConfigFile, func(b []byte) []byte {
			var m map[string]any
			json.Unmarshal(b, &m)
			f(m)
			out, _ := json.Marshal(m)
			return out
		})
	}
	cases := []struct {
		name     string
		corrupt  func(dir string)
		file     string
		wantText string
	}{
		{"flipped-data-byte", editFile(WeightsFile, func(b []byte) []byte { b[len(b)-3] ^= 0x10; return b }), WeightsFile, "checksum mismatch"},
		{"flipped-header-byte", editFile(WeightsFile, func(b []byte) []byte { b[10] ^= 0x01; return b }), WeightsFile, "checksum mismatch"},
		{"truncated-weights", editFile(WeightsFile, func(b []byte) []byte { return b[:len(b)-4] }), WeightsFile, "checksum mismatch"},
		{"missing-weights", func(dir string) { os.Remove(filepath.Join(dir, WeightsFile)) }, WeightsFile, "no such file"},
		{"newer-version", editConfig(func(m map[string]any) { m["format_version"] = 2 }), ConfigFile, "written by a newer textarmor"},
		{"zero-version", editConfig(func(m map[string]any) { delete(m, "format_version") }), ConfigFile, "invalid format_version 0"},
		{"other-format", editConfig(func(m map[string]any) { m["format"] = "keras" }), ConfigFile, `not a textarmor model (format "keras"`},
		{"bad-sha", editConfig(func(m map[string]any) { m["weights_sha256"] = "xyz" }), ConfigFile, "not a SHA-256"},
		{"config-not-json", editFile(ConfigFile, func(b []byte) []byte { return b[:len(b)/2] }), ConfigFile, "invalid JSON"},
		{"vocab-not-array", editFile(VocabFile, func([]byte) []byte { return []byte(`{"a":1}`) }), VocabFile, "JSON array of strings"},
		{"vocab-null", editFile(VocabFile, func([]byte) []byte { return []byte(`null`) }), VocabFile, "got null"},
		{"vocab-numbers", editFile(VocabFile, func([]byte) []byte { return []byte(`["a",1]`) }), VocabFile, "JSON array of strings"},
		// A valid vocabulary in another order, an edited config: both
		// would load and change predictions silently.
		{"vocab-reordered", editFile(VocabFile, func(b []byte) []byte {
			var v []string
			json.Unmarshal(b, &v)
			v[0], v[len(v)-1] = v[len(v)-1], v[0]
			out, _ := json.Marshal(v)
			return append(out, '\n')
		}), VocabFile, "vocab_sha256"},
		{"config-edited", editConfig(func(m map[string]any) { m["config"] = map[string]any{"arch": "cnn", "edited": true} }), ConfigFile, "config_sha256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			if err := Save(dir, testBundle(1)); err != nil {
				t.Fatal(err)
			}
			c.corrupt(dir)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load accepted a damaged model")
			}
			if !strings.Contains(err.Error(), c.wantText) || !strings.Contains(err.Error(), c.file) {
				t.Fatalf("error %q should name %s and say %q", err, c.file, c.wantText)
			}
		})
	}
}

// TestLoadRefusesNonFiniteWeights: NaN or infinite weights are an error
// naming the tensor, not a model that predicts NaN.
func TestLoadRefusesNonFiniteWeights(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		b := testBundle(1)
		var name string
		for n := range b.Tensors {
			name = n
			break
		}
		b.Tensors[name].Data[0] = bad
		dir := filepath.Join(t.TempDir(), "model")
		if err := Save(dir, b); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "non-finite") {
			t.Errorf("%v in %s: %v", bad, name, err)
		}
	}
}

// WeightsDigest is the SHA-256 of the weights file, read from config.json
// alone, and differs between models with different weights.
func TestWeightsDigest(t *testing.T) {
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	if err := Save(dirA, testBundle(1)); err != nil {
		t.Fatal(err)
	}
	if err := Save(dirB, testBundle(2)); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dirA, WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	a, errA := WeightsDigest(dirA)
	b, errB := WeightsDigest(dirB)
	if errA != nil || errB != nil || a != hex.EncodeToString(sum[:]) || a == b {
		t.Errorf("digests %q (%v), %q (%v); file's %x", a, errA, b, errB, sum)
	}
	if _, err := WeightsDigest(t.TempDir()); err == nil {
		t.Error("a folder without config.json has a digest")
	}
}
