package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/pipeline"
	"github.com/textarmor/textarmor/text"
)

// writeVerbsCSV writes n generated sentiment examples (labels 0 and 1) as
// a CSV file with a header.
func writeVerbsCSV(path string, n int, seed int64) {
	var b strings.Builder
	b.WriteString("text,label\n")
	for _, e := range synth.Sentiment(n, 0, seed) {
		fmt.Fprintf(&b, "%q,%d\n", e.Text, e.Label)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

// saveVerbsModel saves an untrained (seeded) CNN over the generated task's
// words, classes 0 and 1, texts cut to 12 tokens: enough to run the jobs.
func saveVerbsModel(dir string) {
	words := []string{text.PadWord, text.UnkWord}
	lex := synth.DefaultLexicon()
	for _, g := range append(lex.Positive, lex.Negative...) {
		words = append(words, g...)
	}
	vocab, err := text.NewVocab(append(words, lex.Neutral...))
	if err != nil {
		log.Fatal(err)
	}
	cfg := nn.Config{Arch: "cnn", EmbedDim: 8, Filters: 4, Widths: []int{2}, EmbedInit: 0.25}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "flat", MaxLen: 12, Classes: []string{"0", "1"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Save(dir); err != nil {
		log.Fatal(err)
	}
}

// EvalModel scores a model on a split or, as here, on a bare test file
// read with the model's own classes.
func ExampleEvalModel() {
	dir, err := os.MkdirTemp("", "textarmor-eval")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	saveVerbsModel(filepath.Join(dir, "model"))
	writeVerbsCSV(filepath.Join(dir, "test.csv"), 40, 3)

	c := pipeline.NewEvalConfig()
	c.Model = filepath.Join(dir, "model")
	c.Data.Test = filepath.Join(dir, "test.csv")
	r, err := pipeline.EvalModel(context.Background(), c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s: %d examples of classes %v, %d cut to %d tokens\n",
		r.Split, filepath.Base(r.File), r.Report.N, r.Report.Classes, r.Truncated, r.Model.MaxLen)

	// A configuration that cannot run is a *ConfigError naming the flag.
	c.Split, c.Data.Test, c.Data.Train = "validation", "", filepath.Join(dir, "test.csv")
	_, err = pipeline.EvalModel(context.Background(), c)
	fmt.Println(err)
	// Output:
	// file test.csv: 40 examples of classes [0 1], 21 cut to 12 tokens
	// split "validation": want train, dev or test
}

// ExplainTexts attributes each prediction to the words of the text.
func ExampleExplainTexts() {
	dir, err := os.MkdirTemp("", "textarmor-explain")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	saveVerbsModel(dir)

	c := pipeline.NewExplainTextsConfig()
	c.Model, c.Class = dir, "1"
	c.Texts = []string{"a good zzqx film", "zzqx qqzz"}
	r, err := pipeline.ExplainTexts(context.Background(), c)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range r.Texts {
		if e.Skipped != "" {
			fmt.Printf("%q: %s\n", e.Text, e.Skipped)
			continue
		}
		fmt.Printf("%s for class %s: %d scores for %v (unknown %v)\n", r.Method, e.Label, len(e.Scores), e.Tokens, e.Unknown)
	}
	// Output:
	// ig for class 1: 4 scores for [a good zzqx film] (unknown [false false true false])
	// "zzqx qqzz": every token is unknown to the model's vocabulary
}

// DataStats describes a dataset: here training and test files.
func ExampleDataStats() {
	dir, err := os.MkdirTemp("", "textarmor-data")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	d := pipeline.NewData()
	d.Train, d.Test = filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeVerbsCSV(d.Train, 30, 1)
	writeVerbsCSV(d.Test, 10, 2)

	r, err := pipeline.DataStats(d)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("classes %v, tokenizer %s, max length %d\n", r.Dataset.Classes, r.Preset.Tokenizer, r.Preset.MaxLen)
	for _, sp := range r.Splits {
		fmt.Printf("%s: %d examples, labels %v\n", sp.Name, sp.Stats.Count, sp.Stats.LabelCounts)
	}
	// Output:
	// classes [0 1], tokenizer flat, max length 50
	// train: 30 examples, labels [20 10]
	// test: 10 examples, labels [7 3]
}

// TrainLM trains the n-gram language model of the alzantot recipe.
func ExampleTrainLM() {
	dir, err := os.MkdirTemp("", "textarmor-lm")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	corpus := filepath.Join(dir, "corpus.txt")
	if err := os.WriteFile(corpus, []byte("the cat sat on the mat\nthe dog sat on the log\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	c := pipeline.NewTrainLMConfig()
	c.Corpus.File, c.Out, c.Options.Label = corpus, filepath.Join(dir, "lm.bin"), "pets"
	r, err := pipeline.TrainLM(context.Background(), c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: order %d, %d words from %d texts\n", r.Model.Name(), r.Model.Order(), r.Model.VocabSize(), r.Sources[0].Texts)
	// Output:
	// kn3(pets, V=7): order 3, 7 words from 2 texts
}
