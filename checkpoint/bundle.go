package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/textarmor/textarmor/tensor"
)

// File names inside a model directory.
const (
	ConfigFile  = "config.json"
	VocabFile   = "vocab.json"
	WeightsFile = "model.safetensors"
)

// Format and FormatVersion identify a model directory's config.json.
// FormatVersion goes up when a change would make older builds misread a
// model; Load refuses versions newer than its own.
const (
	Format        = "textarmor-model"
	FormatVersion = 1
)

// Bundle is everything a model directory holds.
type Bundle struct {
	// Config is the caller's JSON (typically an object describing the
	// architecture). Load returns it compacted; nil is stored as null.
	Config json.RawMessage
	// Vocab is the token list, index = token id.
	Vocab []string
	// Tensors are the weights, by parameter name.
	Tensors map[string]*tensor.Tensor
	// Meta is free-form string metadata kept in the safetensors header.
	Meta map[string]string
}

// configFile is the on-disk config.json wrapper around the caller's config.
type configFile struct {
	Format        string `json:"format"`
	FormatVersion int    `json:"format_version"`
	WeightsSHA256 string `json:"weights_sha256"`
	// VocabSHA256 and ConfigSHA256 digest vocab.json's bytes and the
	// compacted config: a reordered vocabulary or an edited config would
	// load and silently change predictions. Models saved before they
	// existed have neither and are not checked.
	VocabSHA256  string          `json:"vocab_sha256,omitempty"`
	ConfigSHA256 string          `json:"config_sha256,omitempty"`
	Config       json.RawMessage `json:"config"`
}

// digest is the hex SHA-256 of b.
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// compactJSON is cfg without insignificant white space (what the config
// digest covers, so re-indenting config.json does not change it).
func compactJSON(cfg json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, cfg); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Save writes b as a model directory at dir, atomically: everything is
// written and fsynced in a sibling temporary directory, which then replaces
// dir by rename. Readers see the old model or the new one, never a mix, and
// on any error the old model is left as it was and the temporary directory
// removed. (A crash in the instant between moving the old directory aside
// and moving the new one in leaves both as siblings named dir.old-* and
// dir.tmp-*, complete.) To avoid replacing something precious by mistake,
// an existing dir must be empty or a textarmor model. Missing parent
// directories are created.
func Save(dir string, b *Bundle) (err error) {
	if b == nil {
		return errors.New("checkpoint.Save: nil bundle")
	}
	dir = filepath.Clean(dir)
	cfg := b.Config
	if len(bytes.TrimSpace(cfg)) == 0 {
		cfg = json.RawMessage("null")
	} else if !json.Valid(cfg) {
		return fmt.Errorf("%s: config is not valid JSON", dir)
	}
	exists, err := checkReplaceable(dir)
	if err != nil {
		return err
	}
	return writeDirAtomic(dir, exists, func(tmp string) error { return writeBundle(tmp, dir, b, cfg) })
}

// writeBundle writes b's files into the folder tmp; errors name them as
// they will be in dir.
func writeBundle(tmp, dir string, b *Bundle, cfg json.RawMessage) (err error) {
	h := sha256.New()
	err = writeSynced(filepath.Join(tmp, WeightsFile), func(w io.Writer) error {
		return WriteSafetensors(io.MultiWriter(w, h), b.Tensors, b.Meta)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, WeightsFile), err)
	}
	vocab := b.Vocab
	if vocab == nil {
		vocab = []string{}
	}
	vb, err := json.Marshal(vocab)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, VocabFile), err)
	}
	vb = append(vb, '\n')
	if err = writeSynced(filepath.Join(tmp, VocabFile), bytesWriter(vb)); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, VocabFile), err)
	}
	compact, err := compactJSON(cfg)
	if err != nil {
		return fmt.Errorf("%s: config: %w", filepath.Join(dir, ConfigFile), err)
	}
	cb, err := json.MarshalIndent(configFile{Format: Format, FormatVersion: FormatVersion, WeightsSHA256: hex.EncodeToString(h.Sum(nil)),
		VocabSHA256: digest(vb), ConfigSHA256: digest(compact), Config: cfg}, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, ConfigFile), err)
	}
	if err = writeSynced(filepath.Join(tmp, ConfigFile), bytesWriter(append(cb, '\n'))); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, ConfigFile), err)
	}
	return nil
}

// writeDirAtomic creates dir's parents, lets write fill a fresh sibling
// temporary folder, syncs it and swaps it in for dir (exists: whether dir
// exists now); on any error the temporary folder is removed and dir is
// left as it was.
func writeDirAtomic(dir string, exists bool, write func(tmp string) error) (err error) {
	if err = os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
		return err
	}
	tmp, err := mkdirUnique(dir + ".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = syncDir(tmp); err != nil {
		return err
	}
	return swapDir(tmp, dir, exists)
}

// checkReplaceable reports whether dir exists, and refuses a dir that is
// not a directory or holds something other than a textarmor model.
func checkReplaceable(dir string) (exists bool, err error) {
	exists, empty, err := dirState(dir)
	if err != nil || !exists || empty {
		return exists, err
	}
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	var c struct {
		Format string `json:"format"`
	}
	if err != nil || json.Unmarshal(data, &c) != nil || c.Format != Format {
		return false, fmt.Errorf("%s exists and is not a textarmor model; refusing to replace it", dir)
	}
	return true, nil
}

// dirState reports whether dir exists and is empty; anything there that is
// not a directory is an error.
func dirState(dir string) (exists, empty bool, err error) {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !st.IsDir() {
		return false, false, fmt.Errorf("%s exists and is not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, false, err
	}
	return true, len(ents) == 0, nil
}

// unusedName returns prefix plus a random suffix naming nothing yet.
func unusedName(prefix string) (string, error) {
	for range 100 {
		p := prefix + randomSuffix()
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s*: no unused name", prefix)
}

// mkdirUnique creates a new directory prefix+random. Unlike os.MkdirTemp
// (mode 0700) it uses 0777 less the umask, the mode the final model
// directory should have.
func mkdirUnique(prefix string) (string, error) {
	for range 100 {
		p := prefix + randomSuffix()
		err := os.Mkdir(p, 0o777)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return p, err
	}
	return "", fmt.Errorf("%s*: no unused name", prefix)
}

func bytesWriter(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// writeSynced creates path (which must not exist), fills it with write and
// fsyncs it.
func writeSynced(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WeightsDigest returns the weights_sha256 a model directory's config
// records, without reading the weights: a cheap identity of the model for
// files derived from it (the digest is verified when the model is loaded).
func WeightsDigest(dir string) (string, error) {
	cf, _, _, err := readConfig(dir)
	return cf.WeightsSHA256, err
}

// readConfig reads and checks dir's config.json: format, version and the
// form of the weights digest (want, decoded).
func readConfig(dir string) (cf configFile, cpath string, want []byte, err error) {
	cpath = filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(cpath)
	if err != nil {
		return cf, cpath, nil, err
	}
	if err := json.Unmarshal(data, &cf); err != nil {
		return cf, cpath, nil, fmt.Errorf("%s: invalid JSON: %v", cpath, err)
	}
	switch {
	case cf.Format != Format:
		return cf, cpath, nil, fmt.Errorf("%s: not a textarmor model (format %q, want %q)", cpath, cf.Format, Format)
	case cf.FormatVersion > FormatVersion:
		return cf, cpath, nil, fmt.Errorf("%s: format_version %d: written by a newer textarmor (this build reads up to version %d)",
			cpath, cf.FormatVersion, FormatVersion)
	case cf.FormatVersion < 1:
		return cf, cpath, nil, fmt.Errorf("%s: invalid format_version %d", cpath, cf.FormatVersion)
	}
	want, err = hex.DecodeString(cf.WeightsSHA256)
	if err != nil || len(want) != sha256.Size {
		return cf, cpath, nil, fmt.Errorf("%s: weights_sha256 %q is not a SHA-256 hex digest", cpath, cf.WeightsSHA256)
	}
	return cf, cpath, want, nil
}

// Load reads the model directory dir written by Save. It checks the format
// and version, verifies the weights against the SHA-256 in config.json and
// validates every file; errors name the file at fault.
func Load(dir string) (*Bundle, error) {
	cf, cpath, want, err := readConfig(dir)
	if err != nil {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			if h := missingHint(dir); h != "" {
				return nil, fmt.Errorf("%w%s", err, h)
			}
		}
		return nil, err
	}

	vpath := filepath.Join(dir, VocabFile)
	vdata, err := os.ReadFile(vpath)
	if err != nil {
		return nil, err
	}
	var vocab []string
	if err := json.Unmarshal(vdata, &vocab); err != nil {
		return nil, fmt.Errorf("%s: want a JSON array of strings: %v", vpath, err)
	}
	if vocab == nil { // JSON null
		return nil, fmt.Errorf("%s: want a JSON array of strings, got null", vpath)
	}
	if cf.VocabSHA256 != "" && digest(vdata) != cf.VocabSHA256 {
		return nil, fmt.Errorf("%s: checksum mismatch: %s records vocab_sha256 %s, file has %s (edited, reordered or replaced)",
			vpath, ConfigFile, cf.VocabSHA256, digest(vdata))
	}

	wpath := filepath.Join(dir, WeightsFile)
	tensors, meta, err := readVerified(wpath, want)
	if err != nil {
		return nil, err
	}

	for _, name := range slices.Sorted(maps.Keys(tensors)) {
		if err := finiteTensor(wpath, name, tensors[name]); err != nil {
			return nil, err
		}
	}
	var cfg json.RawMessage
	if string(cf.Config) != "null" && len(cf.Config) > 0 {
		compact, err := compactJSON(cf.Config) // already validated by Unmarshal
		if err != nil {
			return nil, fmt.Errorf("%s: config: %v", cpath, err)
		}
		if cf.ConfigSHA256 != "" && digest(compact) != cf.ConfigSHA256 {
			return nil, fmt.Errorf("%s: checksum mismatch: config_sha256 %s, the config has %s (edited by hand?)", cpath, cf.ConfigSHA256, digest(compact))
		}
		cfg = compact
	}
	return &Bundle{Config: cfg, Vocab: vocab, Tensors: tensors, Meta: meta}, nil
}

// readVerified decodes the weights file while hashing it, in one pass. A
// checksum mismatch is reported in preference to a decoding error, since
// corruption is the likelier cause of both.
func readVerified(path string, want []byte) (map[string]*tensor.Tensor, map[string]string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	h := sha256.New()
	tr := io.TeeReader(f, h)
	tensors, meta, derr := decodeSafetensors(tr, size, path)
	// Hash whatever decoding left unread (all of it, on an early error).
	if _, err := io.Copy(io.Discard, tr); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return nil, nil, fmt.Errorf("%s: checksum mismatch: %s records weights_sha256 %x, file has %x (corrupted or replaced)",
			path, ConfigFile, want, got)
	}
	if derr != nil {
		return nil, nil, derr
	}
	return tensors, meta, nil
}

// finiteTensor refuses a tensor holding NaN or an infinity: a model with
// non-finite weights would predict NaN.
func finiteTensor(path, name string, t *tensor.Tensor) error {
	if tensor.AllFinite(t.Data) {
		return nil
	}
	for i, v := range t.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%s: tensor %q holds %v at index %d: a model with non-finite weights would predict NaN", path, name, v, i)
		}
	}
	return nil
}
