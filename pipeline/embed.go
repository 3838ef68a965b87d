package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/senteval"
)

// EmbedStatsConfig configures EmbedStats (`textarmor embed stats`).
type EmbedStatsConfig struct {
	Model string // model directory (required)
	// Synonyms is the neighbour table ("" = the default under DataDir).
	Synonyms, DataDir string
	// Norm is the distance norm: 1, 2 or inf.
	Norm string
	// Alpha is the margin for the share of random pairs within it (0 = the
	// model's FTML/CML alpha, else 0.7·alpha0 of this table).
	Alpha float64
	// Anchors keeps this many most frequent words with synonyms (-1 = all).
	Anchors int
	Seed    int64 // of the random word pairs
}

// NewEmbedStatsConfig returns the CLI's defaults.
func NewEmbedStatsConfig() EmbedStatsConfig {
	return EmbedStatsConfig{Norm: "2", Anchors: 5000, Seed: 1}
}

// Check validates the numbers, the norm and the model.
func (c EmbedStatsConfig) Check() error {
	if err := CheckRules(
		Rule{isFinite(c.Alpha) && c.Alpha >= 0, "alpha", c.Alpha, "a number ≥ 0 (0 = the model's FTML/CML alpha or 0.7·alpha0)"},
		Rule{c.Anchors == -1 || c.Anchors >= 1, "anchors", c.Anchors, "at least 1, or -1 = all"},
	); err != nil {
		return err
	}
	if c.Model == "" {
		return configErrorf("--model is required")
	}
	_, err := ParseNorm("--norm", c.Norm)
	return err
}

// EmbedStatsReport describes how a model's embedding table places
// synonyms against random word pairs (FTML spec §15 check 8).
type EmbedStatsReport struct {
	Stats    defense.Stats
	Synonyms string // the neighbour table read
	// AlphaSource says where Stats.Alpha comes from.
	AlphaSource string
	// WithSynonyms of VocabWords vocabulary words have synonyms.
	WithSynonyms, VocabWords int
}

// EmbedStats measures synonym and random-pair distances in a model's
// embedding table.
func EmbedStats(ctx context.Context, c EmbedStatsConfig) (*EmbedStatsReport, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	p, _ := ParseNorm("--norm", c.Norm)
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	nb, path, err := LoadNeighbors(c.Synonyms, c.DataDir)
	if err != nil {
		return nil, err
	}
	syn := defense.NewSynonymTable(nb, m.Vocab, 8)
	alpha, alphaSrc := c.Alpha, "given"
	if alpha == 0 {
		alpha, alphaSrc = recordedAlpha(m)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &EmbedStatsReport{Synonyms: path, AlphaSource: alphaSrc}
	r.Stats = defense.EmbedStatsWith(m.Net.Emb.W.Value, m.Vocab, syn, rand.New(rand.NewSource(c.Seed)),
		defense.StatsOptions{P: p, Alpha: alpha, MaxAnchors: c.Anchors})
	if alpha == 0 {
		r.AlphaSource = "0.7·alpha0 of this table"
	}
	r.WithSynonyms, r.VocabWords = syn.Coverage()
	return r, nil
}

// recordedAlpha is the margin an FTML/CML model was trained with, from its
// training record (0 when there is none).
func recordedAlpha(m *model.Model) (float64, string) {
	for _, name := range []string{"ftml", "cml"} {
		if rec, ok := m.Training[name].(map[string]any); ok {
			if a, ok := rec["alpha"].(float64); ok && a > 0 {
				return a, "the model's " + name + " training record"
			}
		}
	}
	return 0, ""
}

// EmbedTextConfig configures EmbedText (`textarmor embed-text`).
type EmbedTextConfig struct {
	// Model is a transformer model directory (required): a textarmor model
	// or a Hugging Face BERT directory. BLAS names the matrix backend.
	Model, BLAS string
	// Texts to embed; when there are none, one text per line of Input (the
	// CLI: stdin), read once the model is open.
	Texts []string
	Input io.Reader
}

// EmbedTextReport holds one sentence embedding per text.
type EmbedTextReport struct {
	Texts   []string
	Vectors [][]float32
}

// EmbedText embeds texts with a transformer's sentence pooling.
func EmbedText(ctx context.Context, c EmbedTextConfig) (*EmbedTextReport, error) {
	m, err := openModelOn(c.Model, c.BLAS)
	if err != nil {
		return nil, err
	}
	texts, err := inputTexts(c.Texts, c.Input)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vecs, err := m.Embed(texts)
	if err != nil {
		return nil, err
	}
	return &EmbedTextReport{Texts: texts, Vectors: vecs}, nil
}

// EvalSTSConfig configures EvalSTS (`textarmor eval-sts`).
type EvalSTSConfig struct {
	// Model is a transformer model directory (required): a textarmor model
	// or a Hugging Face BERT directory. BLAS names the matrix backend.
	Model, BLAS string
	// DataDir is the data folder (required), laid out like shared/data.
	DataDir string
	// Sets to score (senteval.LookupSet: stsb, sickr, sts12 … sts16); Split
	// is stsb's and sickr's (train, dev or test).
	Sets  []string
	Split string
}

// NewEvalSTSConfig returns the CLI's defaults: STS-B's test split.
func NewEvalSTSConfig() EvalSTSConfig { return EvalSTSConfig{Sets: []string{"stsb"}, Split: "test"} }

// STSReport holds the scores of every group scored and, for a set of
// several groups (an STS year), their mean Spearman under the set's name
// (N 0), as SentEval's "all" does.
type STSReport struct {
	Results map[string]senteval.STSResult
	Order   []string // the names of Results in report order
}

// EvalSTS scores a model's sentence embeddings: the Spearman correlation
// (×100) of cosine similarities with the gold scores.
func EvalSTS(ctx context.Context, c EvalSTSConfig) (*STSReport, error) {
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	dir, err := DataDir(c.DataDir, "eval-sts")
	if err != nil {
		return nil, err
	}
	// The data first: a missing file is reported before the model loads.
	var sets []senteval.Set
	var groupsOf [][]senteval.Group
	for _, name := range c.Sets {
		set, err := senteval.LookupSet(strings.TrimSpace(name))
		switch {
		case errors.Is(err, senteval.ErrUnknownSet):
			return nil, configErrorf("--sets: %v", err)
		case err != nil:
			return nil, &ConfigError{err}
		}
		groups, err := set.Load(dir, c.Split)
		if err != nil {
			return nil, err
		}
		sets, groupsOf = append(sets, set), append(groupsOf, groups)
	}
	m, err := openModelOn(c.Model, c.BLAS)
	if err != nil {
		return nil, err
	}
	r := &STSReport{Results: map[string]senteval.STSResult{}}
	for k, set := range sets {
		var sum float64
		for _, g := range groupsOf[k] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			res, err := senteval.STS(m, g.Pairs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", g.Name, err)
			}
			r.Results[g.Name] = res
			r.Order = append(r.Order, g.Name)
			sum += res.Spearman
		}
		if n := len(groupsOf[k]); n > 1 {
			r.Results[set.Name] = senteval.STSResult{Spearman: sum / float64(n)}
			r.Order = append(r.Order, set.Name)
		}
	}
	return r, nil
}

// ExportConfig configures Export (`textarmor export`).
type ExportConfig struct {
	Model string // a textarmor transformer model directory (required)
	// Format is the toolkit's: hf, a Hugging Face directory that
	// transformers loads as BertForSequenceClassification.
	Format string
	// Out is the directory to write (required); Overwrite replaces a
	// non-empty one that is not an earlier export.
	Out       string
	Overwrite bool
}

// Export writes a model in another toolkit's format; it returns the model.
func Export(c ExportConfig) (*model.Model, error) {
	if c.Model == "" || c.Out == "" {
		return nil, configErrorf("--model and --out are required")
	}
	if c.Format != "hf" {
		return nil, configErrorf("--format %q: only hf is supported", c.Format)
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	if err := m.ExportHF(c.Out, c.Overwrite); err != nil {
		return nil, err
	}
	return m, nil
}
