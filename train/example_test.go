package train_test

import (
	"fmt"
	"log"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
	"github.com/textarmor/textarmor/train"
)

// toyReviews generates n labelled sentences: the label is the polarity of
// the one sentiment word among neutral ones.
func toyReviews(n int, seed int64) []dataset.Example {
	pos := []string{"good", "great", "fine", "wonderful"}
	neg := []string{"bad", "awful", "poor", "dreadful"}
	filler := []string{"the", "film", "plot", "was", "quite", "and", "acting", "story"}
	rng := rand.New(rand.NewSource(seed))
	out := make([]dataset.Example, n)
	for i := range out {
		words := make([]string, 6)
		for j := range words {
			words[j] = filler[rng.Intn(len(filler))]
		}
		label := rng.Intn(2)
		sentiment := [][]string{neg, pos}[label]
		words[rng.Intn(len(words))] = sentiment[rng.Intn(len(sentiment))]
		out[i] = dataset.Example{Text: strings.Join(words, " "), Label: label}
	}
	return out
}

// Train a CNN classifier, save it, load it back and classify new text: the
// life cycle of a model in a Go program.
func ExampleRun() {
	trainSet, dev := toyReviews(400, 1), toyReviews(100, 2)
	tok := text.NewWhitespace()
	vocab := train.BuildVocab(tok, trainSet, 1, 0)
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 16, 8
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: tok.Name(), MaxLen: 20, Classes: []string{"negative", "positive"}},
		vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opt := train.Options{Epochs: 5, BatchSize: 16, LR: 5e-3, Seed: 1, Out: filepath.Join(dir, "cnn")}
	res, err := train.Run(m, train.Standard{}, train.Encode(m, trainSet), train.Encode(m, dev), opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dev accuracy above 95 %:", res.BestDevAcc > 0.95)

	best, err := model.Load(opt.Out) // the best epoch's model, checksums verified
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range best.PredictTexts([]string{"the acting was wonderful", "the plot was dreadful"}) {
		fmt.Println(p.Label)
	}
	// Output:
	// dev accuracy above 95 %: true
	// positive
	// negative
}

// Train with a defense: FTML pulls each word's embedding towards its
// synonyms', so that swapping a word for a synonym barely moves the
// prediction. Any defense is a train.Objective.
func ExampleRun_defense() {
	trainSet, dev := toyReviews(400, 1), toyReviews(100, 2)
	tok := text.NewWhitespace()
	vocab := train.BuildVocab(tok, trainSet, 1, 0)
	synonyms := lexicon.NewNeighbors("toy")
	synonyms.Set("good", []string{"great", "fine", "wonderful"})
	synonyms.Set("bad", []string{"awful", "poor", "dreadful"})
	ftml, err := defense.NewFTML(defense.DefaultFTMLConfig(defense.NewSynonymTable(synonyms, vocab, 8)))
	if err != nil {
		log.Fatal(err)
	}
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 16, 8
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: tok.Name(), MaxLen: 20, Classes: []string{"negative", "positive"}},
		vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opt := train.Options{Epochs: 5, BatchSize: 16, LR: 5e-3, Seed: 1, Out: filepath.Join(dir, "cnn-ftml")}
	res, err := train.Run(m, ftml, train.Encode(m, trainSet), train.Encode(m, dev), opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("objective:", ftml.Name())
	fmt.Println("dev accuracy above 95 %:", res.BestDevAcc > 0.95)
	// Output:
	// objective: ftml
	// dev accuracy above 95 %: true
}
