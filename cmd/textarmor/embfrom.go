package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
)

// embeddingsFrom implements `train --embeddings-from DIR` (FTML spec §12.1,
// robust embeddings alone): the new model takes the trained model's
// vocabulary and embedding table, frozen unless --freeze-embeddings=false is
// given explicitly. It returns the source model (nil when the flag is not
// set), and sets cfg's embedding size and freezing and the tokenizer.
func embeddingsFrom(fs *flag.FlagSet, nf *netFlags, cfg *nn.Config, tokenizer *string, stderr io.Writer) (*model.Model, error) {
	if nf.embFrom == "" {
		return nil, nil
	}
	if nf.embeddings != "" {
		return nil, usageError{fmt.Errorf("give either --embeddings or --embeddings-from, not both")}
	}
	var freezeSet, vocabSet bool
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "freeze-embeddings":
			freezeSet = true
		case "min-count", "max-vocab":
			vocabSet = true
		}
	})
	if vocabSet {
		return nil, usageError{fmt.Errorf("--min-count/--max-vocab cannot be used with --embeddings-from: the vocabulary is the source model's")}
	}
	src, err := model.Load(nf.embFrom)
	if err != nil {
		return nil, fmt.Errorf("--embeddings-from: %w", err)
	}
	cfg.EmbedDim = src.Net.Cfg.EmbedDim
	if !freezeSet {
		cfg.FreezeEmb = true
	}
	if *tokenizer != src.Tokenizer {
		fmt.Fprintf(stderr, "embeddings-from: using the source model's tokenizer %s (not %s) so its vocabulary applies\n", src.Tokenizer, *tokenizer)
		*tokenizer = src.Tokenizer
	}
	state := "frozen (--freeze-embeddings implied; --freeze-embeddings=false to fine-tune)"
	if !cfg.FreezeEmb {
		state = "trainable (--freeze-embeddings=false)"
	}
	fmt.Fprintf(stderr, "embeddings-from: %s: vocabulary of %d words and %d-d embedding table (trained with %v), %s\n",
		nf.embFrom, src.Vocab.Len(), cfg.EmbedDim, src.Training["objective"], state)
	if src.Net.Cfg.IDMap != nil {
		fmt.Fprintf(stderr, "embeddings-from: note: the source model has a SEM id map; it is not transferred (raw ids index the table)\n")
	}
	return src, nil
}

// copyEmbeddings copies the source table into m (same vocabulary, so same
// shape) and returns the training-record entry.
func copyEmbeddings(m *model.Model, src *model.Model, dir string) (map[string]any, error) {
	dst, from := m.Net.Emb.W.Value, src.Net.Emb.W.Value
	if len(dst.Data) != len(from.Data) {
		return nil, fmt.Errorf("--embeddings-from: table sizes differ (%v vs %v)", dst.Shape, from.Shape)
	}
	copy(dst.Data, from.Data)
	rec := map[string]any{"path": dir, "arch": src.Net.Cfg.Arch, "vocab": src.Vocab.Len(), "dim": src.Net.Cfg.EmbedDim,
		"frozen": m.Net.Emb.W.Frozen}
	for _, k := range []string{"objective", "dataset", "defense"} {
		if v, ok := src.Training[k]; ok {
			rec[k] = v
		}
	}
	return rec, nil
}
