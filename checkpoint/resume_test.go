package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

func TestLoadRunAndSplit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	var cfg struct{ Step int }
	if b, ok, err := LoadRun(dir, &cfg); b != nil || ok || err != nil {
		t.Fatalf("no checkpoint: %v %v %v", b, ok, err)
	}
	ts := map[string]*tensor.Tensor{"w": tensor.New(2), "optimizer/w.exp_avg": tensor.New(2), "optimizer/": tensor.New(1)}
	if err := Save(dir, &Bundle{Config: []byte(`{"Step":7}`), Tensors: ts}); err != nil {
		t.Fatal(err)
	}
	b, ok, err := LoadRun(dir, &cfg)
	if err != nil || !ok || cfg.Step != 7 {
		t.Fatalf("LoadRun: %v %v step %d", ok, err, cfg.Step)
	}
	rest, opt := b.Split("optimizer/")
	if len(rest) != 2 || rest["w"] == nil || rest["optimizer/"] == nil || len(opt) != 1 || opt["w.exp_avg"] == nil {
		t.Errorf("Split: rest %v, prefixed %v", rest, opt)
	}
	if err := Save(dir, &Bundle{Config: []byte(`[1]`), Tensors: ts}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := LoadRun(dir, &cfg); ok || err == nil {
		t.Errorf("a config of another shape: ok %v, err %v", ok, err)
	}
}
