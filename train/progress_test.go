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
