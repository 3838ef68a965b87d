package explain

import (
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// A transformer with FLAT's word mask goes through the word-level
// interpretation agreement (IG and LIME, pieces summed into words): a
// substitution that changes the piece count still compares four words with
// four (TestIGCompleteness checks IG's scores on a masked transformer).
func TestScorePairMaskedTransformer(t *testing.T) {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad", "not", "play", "##ing", ",", "."}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Intermediate, tc.MaxPositions, tc.Pool, tc.Pooler = 16, 32, "pooler", true
	cfg.Transformer, cfg.EmbedDim, cfg.Mask, cfg.MaskHidden = &tc, 8, true, 6
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"neg", "pos"}, Pieces: &opts},
		wp, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Net.StateMasked() == nil {
		t.Fatal("no word mask on the states")
	}
	for _, method := range []string{"ig", "lime"} {
		s, err := ScorePair(m, method, 2, "the movie was good", "the movie was playing", 1, nil)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if !s.Explained || s.Mismatch || s.TI < 0 || s.TI > 1 {
			t.Errorf("%s: %+v", method, s)
		}
	}
}
