package mlm

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/realdata"
	"github.com/textarmor/textarmor/model"
)

// On the shared all-MiniLM-L6-v2 (no head of its own): a fresh head
// attaches, a few steps of training lower its loss, and the predictor
// places [MASK] where the word was, giving whole words of the real
// vocabulary for both attacks.
func TestRealMiniLMHead(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "models", "all-MiniLM-L6-v2")
	m, err := model.ImportHF(dir, model.ImportOptions{Reconstructor: true, MaxLen: 32})
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := m.Training["reconstructor_from_checkpoint"].(bool); own {
		t.Fatal("the shared checkpoint was published without a masked-LM head")
	}
	texts := []string{"the film was good .", "a dull and tedious movie .", "an utterly charming story .", "the acting is terrible .",
		"one of the best films of the year .", "it never finds its footing ."}
	var seqs [][]int32
	for range 8 {
		for _, s := range texts {
			seqs = append(seqs, m.Encode(s))
		}
	}
	h, _ := NewHead(m.Net, 0)
	o := DefaultOptions()
	o.Epochs, o.Batch, o.LR, o.Masking.Rate = 3, 16, 3e-3, 0.3
	ep, err := Train(context.Background(), h, seqs, PiecesOf(m), o)
	if err != nil {
		t.Fatal(err)
	}
	if ep[2].Loss >= ep[0].Loss {
		t.Errorf("losses %+v", ep)
	}
	p, _ := NewPredictor(m, "minilm")
	words := strings.Fields("the movie was really good .")
	for name, got := range map[string][]string{"masked": p.Masked(words, 4, 20, 0), "in place": p.InPlace(words, 4, 20)} {
		if len(got) < 5 || slices.ContainsFunc(got, func(w string) bool { return !wholeWord(w) }) {
			t.Errorf("%s: %v", name, got)
		}
	}
}
