package attack

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/textarmor/textarmor/langmodel"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// ResourceFiles say where an attack's resources are; LoadResources reads
// those its Needs name.
type ResourceFiles struct {
	Synonyms string // counter-fitted neighbour sets (JSON word -> neighbours)
	// DefaultSynonyms, when set, gives the neighbour sets' path when
	// Synonyms is empty; it is called only when they are read.
	DefaultSynonyms func() (string, error)
	WordNet         string // WordNet 3.0 dict folder
	Vectors         string // word vectors (optional): distances, the USE stand-in and nearest substitutes
	LM              string // n-gram language model (optional; Alzantot's GA)
	// NearestK and NearestCos make the nearest-neighbour substitutes from
	// Vectors (Needs.NearestK/NearestCos are the recipes' own);
	// NearestVocab adds the first that many words of the vectors file the
	// model lacks (when substitutes may be out of its vocabulary, Needs.OOV).
	NearestK     int
	NearestCos   float64
	NearestVocab int
	CacheDir     string    // where nearest tables are cached ("": not cached)
	QueryBudget  int       // copied to Resources
	Log          io.Writer // what was loaded and computed, or nil
}

// ResourceError says which resource ("synonyms", "wordnet", "vectors",
// "lm", "encoder") could not be loaded, so that a caller can say how to
// give it.
type ResourceError struct {
	Resource string
	Err      error
	// Empty: the resource loaded but offers nothing (a neighbour table
	// without a neighbour, vectors for none of the model's words).
	Empty bool
}

func (e *ResourceError) Error() string { return e.Resource + ": " + e.Err.Error() }
func (e *ResourceError) Unwrap() error { return e.Err }

// LoadResources reads the resources need names from files, for attacking
// m: the neighbour sets (restricted to m's vocabulary unless need.OOV),
// WordNet, word vectors (embedding distance, the mean-vector stand-in for
// USE and, with need.Nearest, the nearest substitutes), m's own embedding
// table as HLA's similarity when no vectors are given, the WordNet POS
// tagger (omitted, said in Log, without WordNet) and the language model.
// Errors name the resource.
func LoadResources(need Needs, m *model.Model, files ResourceFiles) (Resources, error) {
	log := files.Log
	if log == nil {
		log = io.Discard
	}
	res := Resources{QueryBudget: files.QueryBudget}
	if files.Vectors != "" {
		v := m.Vocab
		if need.OOV && files.NearestVocab > 0 {
			// Substitutes the model lacks (TextAttack's candidates from the
			// whole vectors file, or neighbour-set words) need vectors for
			// the embedding-distance and sentence-similarity checks.
			var err error
			if v, err = text.WithVectorWords(m.Vocab, files.Vectors, files.NearestVocab); err != nil {
				return res, &ResourceError{Resource: "vectors", Err: err}
			}
		}
		vs, err := text.LoadVectors(files.Vectors, v)
		if err != nil {
			return res, &ResourceError{Resource: "vectors", Err: err}
		}
		found := 0
		for id := int(text.UnkID) + 1; id < m.Vocab.Len() && id < len(vs.Found); id++ {
			if vs.Found[id] {
				found++
			}
		}
		if found == 0 {
			return res, &ResourceError{Resource: "vectors", Err: fmt.Errorf("%s: none of the model's %d words has a vector there (another language or tokenization?)",
				files.Vectors, m.Vocab.Len()-2), Empty: true}
		}
		name := filepath.Base(files.Vectors)
		if need.Nearest {
			if res.Nearest, err = BuildNearest(vs, v, m.Vocab.Len(), files.NearestK, files.NearestCos, name, files.CacheDir, log); err != nil {
				return res, err
			}
		}
		res.Distance = CosineDistance{Table: vs}
		res.Encoder = MeanVectorEncoder{Table: vs}
	} else if need.Encoder {
		if m.Pieces != nil {
			return res, &ResourceError{Resource: "encoder", Err: errors.New("hla on a transformer needs word vectors (its embedding table holds word pieces, not words)")}
		}
		if m.Net == nil {
			return res, &ResourceError{Resource: "encoder", Err: errors.New("hla on a remote victim needs word vectors (its embedding table is out of reach)")}
		}
		w := m.Net.Emb.W.Value
		res.Encoder = MeanVectorEncoder{Table: text.TableVectors("model embedding table", m.Vocab, w.Shape[1], w.Data)}
	}
	if need.Tagger {
		wn, err := lexicon.OpenWordNet(files.WordNet)
		if err != nil {
			fmt.Fprintf(log, "no WordNet (%v): part-of-speech constraint omitted\n", err)
		} else {
			res.Tagger = lexicon.POSTagger{WN: wn}
		}
	}
	if need.Synonyms && res.Nearest == nil {
		path := files.Synonyms
		if path == "" && files.DefaultSynonyms != nil {
			var err error
			if path, err = files.DefaultSynonyms(); err != nil {
				return res, err
			}
		}
		nb, err := lexicon.LoadNeighbors(path)
		if err != nil {
			return res, &ResourceError{Resource: "synonyms", Err: err}
		}
		if !need.OOV {
			nb = nb.Restrict(m.Vocab) // the FTML protocol's S(w) lives in the model vocabulary
		}
		// A table without a single neighbour attacks nothing: every example
		// would "fail" and the accuracy under attack be the clean accuracy.
		if nb.Edges() == 0 {
			return res, &ResourceError{Resource: "synonyms", Err: fmt.Errorf("%s gives no word a neighbour%s; check the file", path,
				map[bool]string{true: " in the model's vocabulary (protocol ftml)"}[!need.OOV]), Empty: true}
		}
		res.Synonyms = nb
	}
	if need.WordNet {
		wn, err := lexicon.OpenWordNet(files.WordNet)
		if err != nil {
			return res, &ResourceError{Resource: "wordnet", Err: err}
		}
		res.WordNet = wn.Source(lexicon.Any)
	}
	if need.LM && files.LM != "" {
		lm, err := langmodel.Load(files.LM)
		if err != nil {
			return res, &ResourceError{Resource: "lm", Err: err}
		}
		res.LM = lm
	}
	return res, nil
}
