package pipeline

import (
	"context"
	"encoding/json"
	"io"
	"math/rand"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
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
	// Format is how Write prints the vectors: json ("" too) or tsv.
	Format string
}

// EmbedTextReport holds one sentence embedding per text.
type EmbedTextReport struct {
	Texts   []string
	Vectors [][]float32
	Format  string // json or tsv
}

// Write prints one vector per text: as json, one {"text", "embedding"}
// object per line; as tsv, the text (tabs and newlines made spaces) then
// the values, tab-separated.
func (r *EmbedTextReport) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	for i, v := range r.Vectors {
		if r.Format == "json" {
			if err := enc.Encode(map[string]any{"text": r.Texts[i], "embedding": v}); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		b.WriteString(strings.NewReplacer("\t", " ", "\n", " ").Replace(r.Texts[i]))
		for _, x := range v {
			b.WriteByte('\t')
			b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// EmbedText embeds texts with a transformer's sentence pooling.
func EmbedText(ctx context.Context, c EmbedTextConfig) (*EmbedTextReport, error) {
	if c.Format == "" {
		c.Format = "json"
	}
	if c.Format != "json" && c.Format != "tsv" {
		return nil, configErrorf("--format %q: want json or tsv", c.Format)
	}
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
	return &EmbedTextReport{Texts: texts, Vectors: vecs, Format: c.Format}, nil
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
