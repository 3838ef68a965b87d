package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/pipeline"
)

// writeSentimentCSV writes n generated sentiment examples as a CSV file
// with the columns text and label.
func writeSentimentCSV(path string, n int, seed int64) error {
	var b strings.Builder
	b.WriteString("text,label\n")
	for _, e := range synth.Sentiment(n, 0, seed) {
		fmt.Fprintf(&b, "%q,%d\n", e.Text, e.Label)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Train a small CNN on CSV files, as `textarmor train --train ... --dev
// ... --test ... --out ...` does, and read the test evaluation.
func ExampleTrain() {
	dir, err := os.MkdirTemp("", "textarmor-train")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	c := pipeline.NewTrainConfig()
	c.Data.Train, c.Data.Dev, c.Data.Test = filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv"), filepath.Join(dir, "test.csv")
	for i, f := range []string{c.Data.Train, c.Data.Dev, c.Data.Test} {
		if err := writeSentimentCSV(f, []int{300, 60, 60}[i], int64(i+1)); err != nil {
			fmt.Println(err)
			return
		}
	}
	c.Net.EmbedDim, c.Net.Filters = 16, 8
	c.Options.Epochs, c.Options.BatchSize, c.Options.LR = 5, 32, 0.01
	c.Options.Out = filepath.Join(dir, "model")
	rep, err := pipeline.Train(context.Background(), c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d epochs on %d training examples; model classes %v\n", len(rep.Result.Epochs), len(rep.Dataset.Train), rep.Model.Classes)
	fmt.Printf("test: %d examples, accuracy above 0.8: %v\n", rep.Test.N, rep.Test.Accuracy > 0.8)
	// Output:
	// 5 epochs on 300 training examples; model classes [0 1]
	// test: 60 examples, accuracy above 0.8: true
}
