package explain_test

import (
	"fmt"
	"log"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// reviews generates n sentences whose label is the polarity of their one
// sentiment word.
func reviews(n int, seed int64) []dataset.Example {
	words := [][]string{{"bad", "awful", "poor"}, {"good", "great", "wonderful"}}
	filler := []string{"the", "film", "plot", "was", "quite", "and", "acting", "story"}
	rng := rand.New(rand.NewSource(seed))
	out := make([]dataset.Example, n)
	for i := range out {
		s := make([]string, 6)
		for j := range s {
			s[j] = filler[rng.Intn(len(filler))]
		}
		label := rng.Intn(2)
		s[rng.Intn(len(s))] = words[label][rng.Intn(3)]
		out[i] = dataset.Example{Text: strings.Join(s, " "), Label: label}
	}
	return out
}

// Explain a prediction with integrated gradients: which words moved the
// model to its class.
func ExampleIG() {
	tok := text.NewWhitespace()
	trainSet := reviews(400, 1)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 16, 8
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: tok.Name(), MaxLen: 20, Classes: []string{"negative", "positive"}},
		train.BuildVocab(tok, trainSet, 1, 0), rand.New(rand.NewSource(1)))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opt := train.Options{Epochs: 5, BatchSize: 16, LR: 5e-3, Seed: 1, Out: filepath.Join(dir, "cnn")}
	if _, err := train.Run(m, train.Standard{}, train.Encode(m, trainSet), train.Encode(m, reviews(100, 2)), opt); err != nil {
		log.Fatal(err)
	}

	sentence := "the story was quite wonderful"
	pred := m.PredictTexts([]string{sentence})[0]
	scores, err := explain.IG(m.Net, m.Encode(sentence), []int{pred.Class}, 0) // 0: the default steps
	if err != nil {
		log.Fatal(err)
	}
	words := strings.Fields(sentence)
	top := 0
	for i, s := range scores[0] {
		if s > scores[0][top] {
			top = i
		}
	}
	fmt.Printf("%s, mostly because of %q\n", pred.Label, words[top])
	// Output:
	// positive, mostly because of "wonderful"
}
