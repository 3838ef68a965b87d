package train

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The bar shows a running accuracy only when there is one: objectives
// without class logits (sentence embeddings) pass NaN.
func TestEpochBarAccuracy(t *testing.T) {
	for _, c := range []struct {
		acc  float64
		want bool
	}{{0.75, true}, {math.NaN(), false}} {
		var b bytes.Buffer
		p := newProgress(&b, "epoch 1/1", 4)
		p.update(4, 0.5, c.acc)
		p.finish()
		if got := strings.Contains(b.String(), " acc "); got != c.want || !strings.Contains(b.String(), "loss 0.5000") {
			t.Errorf("acc %v: %q", c.acc, b.String())
		}
	}
}

// A resume refuses other learning-rate scales: they change the numbers.
func TestResumeComparesLRScale(t *testing.T) {
	a := settingsOf(Options{LR: 1e-3, LRScale: map[string]float64{"emb": 10, "a": 2}})
	b := settingsOf(Options{LR: 1e-3, LRScale: map[string]float64{"a": 2, "emb": 10}})
	if d := a.differs(b); d != "" {
		t.Errorf("same scales differ: %s", d)
	}
	if d := a.differs(settingsOf(Options{LR: 1e-3})); !strings.Contains(d, "--embed-lr-scale") {
		t.Errorf("other scales: %q", d)
	}
	bad := Options{Optimizer: "sgd", LRScale: map[string]float64{"emb": 2}}
	if err := bad.defaults(); err == nil {
		t.Error("sgd with a scale accepted")
	}
	bad = Options{LRScale: map[string]float64{"emb": 0}}
	if err := bad.defaults(); err == nil {
		t.Error("a zero scale accepted")
	}
}
