package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/retrofit"
)

// retrofitEmbeddings pulls the initial embedding rows of synonyms together
// (package retrofit) before training, so that a table without pretrained
// vectors gets the synonym structure of counter-fitted vectors.
func retrofitEmbeddings(m *model.Model, sweeps int, synPath, dataDir string, stderr io.Writer) error {
	n, path, err := loadNeighborFile(synPath, dataDir)
	if err != nil {
		return err
	}
	g := lexicon.VocabGraph(n, m.Vocab)
	words, edges := 0, 0
	for _, nb := range g {
		if len(nb) > 0 {
			words++
			edges += len(nb)
		}
	}
	if err := retrofit.Apply(m.Net.Emb.W.Value.Data, m.Net.Cfg.EmbedDim, g, sweeps, 1); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "retrofit: %d sweeps over %s: %d of %d vocabulary words have synonyms (%d directed edges)\n",
		sweeps, path, words, m.Vocab.Len()-2, edges)
	return nil
}

// retrofitting reports whether --retrofit was given a positive value.
func retrofitting(fs *flag.FlagSet) bool {
	on := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "retrofit" && f.Value.String() != "0" {
			on = true
		}
	})
	return on
}
