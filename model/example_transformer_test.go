package model_test

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// ExampleImportHF imports a Hugging Face BERT-architecture directory: the
// encoder's weights exactly, its tokenizer, and (for a sentence-transformers
// model) its pooling. With Classes the model gets a fresh head to fine-tune
// (train.Run); without, it is an encoder for Embed.
func ExampleImportHF() {
	m, err := model.ImportHF("../shared/data/models/all-MiniLM-L6-v2", model.ImportOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, err := m.Embed([]string{"A man is playing a guitar.", "Someone plays an instrument."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(vecs[0]))
}

// ExampleModel_Embed embeds texts with a (here random, tiny) transformer
// that pools by the mean of its token states and normalises.
func ExampleModel_Embed() {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film", "bad"}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := nn.DefaultConfig("transformer")
	cfg.EmbedDim = 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Classes: []string{"neg", "pos"},
		Pieces: &opts, Sentence: &model.SentenceSpec{Pool: "mean", Normalize: true}}, wp, rand.New(rand.NewSource(1)))
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, err := m.Embed([]string{"a good film", "a bad film"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var norm float64
	for _, x := range vecs[0] {
		norm += float64(x) * float64(x)
	}
	fmt.Printf("%d vectors of %d values, norm %.3f\n", len(vecs), len(vecs[0]), math.Sqrt(norm))
	// Output:
	// 2 vectors of 16 values, norm 1.000
}
