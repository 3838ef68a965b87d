package attack

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// TestLoadResourcesReadsWhatIsNeeded: the neighbour sets are restricted to
// the model vocabulary when substitutes must stay in it, kept whole when
// they may reach the model as UNK, refused when they give no word a
// neighbour; without vectors HLA's similarity is the model's own table;
// what is not needed is not read.
func TestLoadResourcesReadsWhatIsNeeded(t *testing.T) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "good", "film"})
	cfg := nn.DefaultConfig("cnn")
	cfg.EmbedDim, cfg.Filters = 4, 2
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 5, Classes: []string{"neg", "pos"}}, vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	syn := filepath.Join(dir, "syn.json")
	nb := lexicon.NewNeighbors("t")
	nb.Set("good", []string{"fine", "great"})
	if err := lexicon.SaveNeighbors(syn, nb); err != nil {
		t.Fatal(err)
	}
	files := ResourceFiles{Synonyms: syn, WordNet: filepath.Join(dir, "none")}

	res, err := LoadResources(Needs{Synonyms: true, OOV: true}, m, files)
	if err != nil || len(res.Synonyms.Synonyms("good")) != 2 || res.WordNet != nil || res.Encoder != nil {
		t.Fatalf("OOV substitutes: %+v, %v", res, err)
	}
	// In the vocabulary only, "good" has no neighbour left: refused.
	var re *ResourceError
	if _, err := LoadResources(Needs{Synonyms: true}, m, files); !errors.As(err, &re) || re.Resource != "synonyms" || !re.Empty ||
		!strings.Contains(err.Error(), "gives no word a neighbour") {
		t.Fatalf("vocabulary-only table without neighbours: %v", err)
	}
	res, err = LoadResources(Needs{Encoder: true}, m, ResourceFiles{})
	if err != nil || res.Encoder == nil || res.Synonyms != nil {
		t.Fatalf("HLA without vectors: %+v, %v", res, err)
	}
	if _, err := LoadResources(Needs{WordNet: true}, m, files); !errors.As(err, &re) || re.Resource != "wordnet" || re.Empty {
		t.Fatalf("missing WordNet: %v", err)
	}
	os.Remove(syn)
	if _, err := LoadResources(Needs{WordNet: false}, m, files); err != nil {
		t.Fatalf("nothing needed, nothing read: %v", err)
	}
}
