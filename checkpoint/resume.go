package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/textarmor/textarmor/tensor"
)

// LoadRun opens the training checkpoint at dir for a resume and decodes
// its config into cfg; ok is false (and nothing decoded) when dir does not
// exist. The trainers (train, lstmlm, mlm) then check that it belongs to
// the run at hand before they restore anything.
func LoadRun(dir string, cfg any) (b *Bundle, ok bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if b, err = Load(dir); err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(b.Config, cfg); err != nil {
		return nil, false, fmt.Errorf("%s: %w", dir, err)
	}
	return b, true, nil
}

// Split separates the tensors named prefix+name (returned under name)
// from the rest, such as an optimizer's state saved beside the weights.
func (b *Bundle) Split(prefix string) (rest, prefixed map[string]*tensor.Tensor) {
	rest, prefixed = map[string]*tensor.Tensor{}, map[string]*tensor.Tensor{}
	for k, v := range b.Tensors {
		if name, ok := strings.CutPrefix(k, prefix); ok && name != "" {
			prefixed[name] = v
		} else {
			rest[k] = v
		}
	}
	return rest, prefixed
}
