// Package counterfit injects synonym and antonym constraints into word
// vectors (Mrkšić et al. 2016, "Counter-fitting Word Vectors to Linguistic
// Constraints"): synonyms are pulled together, antonyms pushed apart, and
// words that were close in the original space are kept close.
//
// The counter-fitted vectors are what TextFooler, Alzantot's GA and PSO take
// their substitutes from (the nearest neighbours by cosine). They cannot be
// downloaded here, but the constraints they were made with can
// (shared/data/counter-fitting-constraints), so any user can counter-fit
// the vectors they have: given the paper's starting vectors (Paragram-SL999)
// and its constraints, this reproduces the published procedure.
package counterfit

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// Options are the procedure's hyper-parameters; DefaultOptions gives the
// paper's.
type Options struct {
	// K1, K2 and K3 weigh antonym repel, synonym attract and vector space
	// preservation.
	K1, K2, K3 float64
	// Delta: antonyms are pushed until their cosine distance is at least
	// Delta. Gamma: synonyms are pulled until it is at most Gamma.
	Delta, Gamma float64
	// Rho: word pairs within this cosine distance in the original space
	// form the preservation term; they may not drift further apart.
	Rho float64
	// Iters is the number of full-batch update steps.
	Iters int
	// MaxVSP caps each word's preservation neighbours (its nearest ones);
	// 0 keeps all within Rho, as the paper does.
	MaxVSP int
}

// DefaultOptions returns the paper's settings (its Table 1 configuration,
// the defaults of the authors' code): k1 = k2 = k3 = 0.1, δ = 1, γ = 0,
// ρ = 0.2, 20 steps.
func DefaultOptions() Options {
	return Options{K1: 0.1, K2: 0.1, K3: 0.1, Delta: 1, Gamma: 0, Rho: 0.2, Iters: 20}
}

// Validate reports the first impossible setting.
func (o Options) Validate() error {
	switch {
	case o.K1 < 0 || o.K2 < 0 || o.K3 < 0:
		return fmt.Errorf("counterfit: weights k1 %g, k2 %g, k3 %g must be ≥ 0", o.K1, o.K2, o.K3)
	case o.Delta < 0 || o.Delta > 2 || o.Gamma < 0 || o.Gamma > 2:
		return fmt.Errorf("counterfit: δ %g and γ %g must be cosine distances in [0, 2]", o.Delta, o.Gamma)
	case o.Rho < 0 || o.Rho > 2:
		return fmt.Errorf("counterfit: ρ %g must be a cosine distance in [0, 2]", o.Rho)
	case o.Iters < 0 || o.MaxVSP < 0:
		return fmt.Errorf("counterfit: iterations %d and VSP cap %d must be ≥ 0", o.Iters, o.MaxVSP)
	}
	return nil
}

// Pair is an ordered pair of words.
type Pair [2]string

// ReadPairs reads a constraint file: one pair "word1 word2" per line
// (further fields are ignored, blank lines skipped), as the counter-fitting
// constraint files are laid out. Words are lower-cased.
func ReadPairs(path string) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("counterfit: %w", err)
	}
	defer f.Close()
	var out []Pair
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		switch len(fields) {
		case 0:
			continue
		case 1:
			return nil, fmt.Errorf("%s:%d: want two words, got %q", path, line, fields[0])
		}
		out = append(out, Pair{strings.ToLower(fields[0]), strings.ToLower(fields[1])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Stats describes a run.
type Stats struct {
	Words    int `json:"words"`    // rows with a vector
	Synonyms int `json:"synonyms"` // ordered synonym pairs used
	Antonyms int `json:"antonyms"` // ordered antonym pairs used
	VSP      int `json:"vsp"`      // ordered preservation pairs
	// Mean cosine of the synonym and antonym pairs before and after.
	SynCosBefore float64 `json:"synonym_cos_before"`
	SynCosAfter  float64 `json:"synonym_cos_after"`
	AntCosBefore float64 `json:"antonym_cos_before"`
	AntCosAfter  float64 `json:"antonym_cos_after"`
}

type idPair struct{ i, j int32 }

// Fit counter-fits the rows of vecs that have a vector (vecs.Found), in
// place; rows are left unit-length. Pairs whose words are not both such
// rows are dropped, each pair is used in both directions, and a pair that
// is both a synonym and an antonym pair counts as an antonym pair only (as
// in the authors' code).
//
// Each step reads the current vectors and moves every word by the mean of
// its terms' gradients (the authors' per-word scaling), then renormalises:
//   - antonyms (i, j) closer than δ: v_i += k1·(v_i(v_i·v_j) − v_j)
//   - synonyms (i, j) further than γ: v_i −= k2·(v_i(v_i·v_j) − v_j)
//   - preservation pairs further apart than originally: v_i −= k3·(…)
//
// The authors' code keys the reverse of each preservation pair wrongly, so
// only one word of each pair moves there; here both do, as the paper's
// objective says.
func Fit(vecs *text.Vectors, vocab *text.Vocab, synonyms, antonyms []Pair, opt Options) (Stats, error) {
	if err := opt.Validate(); err != nil {
		return Stats{}, err
	}
	n, dim := vocab.Len(), vecs.Dim
	if len(vecs.Found) != n || len(vecs.Data) != n*dim || dim < 1 {
		return Stats{}, fmt.Errorf("counterfit: vectors have %d rows of %d values, the vocabulary %d words", len(vecs.Found), dim, n)
	}
	var st Stats
	for id := range n {
		if vecs.Found[id] && normalize(vecs.Row(int32(id))) {
			st.Words++
		} else {
			vecs.Found[id] = false
		}
	}
	ant := pairIDs(antonyms, vecs, vocab, nil)
	isAnt := make(map[idPair]bool, len(ant))
	for _, p := range ant {
		isAnt[p] = true
	}
	syn := pairIDs(synonyms, vecs, vocab, isAnt)

	// Preservation pairs and their original distances.
	var vsp []idPair
	var orig []float32
	if opt.K3 > 0 && opt.Iters > 0 {
		nb := lexicon.NearestNeighbors(vecs, vocab, opt.MaxVSP, float32(1-opt.Rho), nil)
		for id := int32(text.UnkID) + 1; int(id) < n; id++ {
			for _, w := range nb.Synonyms(vocab.Word(id)) {
				p := idPair{id, vocab.ID(w)}
				if !isAnt[p] {
					vsp = append(vsp, p)
					orig = append(orig, 1-dot(vecs.Row(p.i), vecs.Row(p.j)))
				}
			}
		}
	}
	st.Synonyms, st.Antonyms, st.VSP = len(syn), len(ant), len(vsp)
	st.SynCosBefore, st.AntCosBefore = meanCos(vecs, syn), meanCos(vecs, ant)

	upd := make([]float64, n*dim)
	cnt := make([]int32, n)
	// add accumulates sign·k·(v_i(v_i·v_j) − v_j) into word i's update.
	add := func(p idPair, uv float32, k float64) {
		u, v := vecs.Row(p.i), vecs.Row(p.j)
		acc := upd[int(p.i)*dim : int(p.i+1)*dim]
		for d := range acc {
			acc[d] += k * float64(u[d]*uv-v[d])
		}
		cnt[p.i]++
	}
	for range opt.Iters {
		clear(upd)
		clear(cnt)
		for _, p := range ant {
			if uv := dot(vecs.Row(p.i), vecs.Row(p.j)); float64(1-uv) < opt.Delta {
				add(p, uv, opt.K1)
			}
		}
		for _, p := range syn {
			if uv := dot(vecs.Row(p.i), vecs.Row(p.j)); float64(1-uv) > opt.Gamma {
				add(p, uv, -opt.K2)
			}
		}
		for k, p := range vsp {
			if uv := dot(vecs.Row(p.i), vecs.Row(p.j)); 1-uv > orig[k] {
				add(p, uv, -opt.K3)
			}
		}
		// Updates were computed from the old vectors: apply them all now.
		for id := range n {
			if cnt[id] == 0 {
				continue
			}
			row := vecs.Row(int32(id))
			acc := upd[id*dim : (id+1)*dim]
			inv := 1 / float64(cnt[id])
			for d := range row {
				row[d] += float32(acc[d] * inv)
			}
			normalize(row)
		}
	}
	st.SynCosAfter, st.AntCosAfter = meanCos(vecs, syn), meanCos(vecs, ant)
	return st, nil
}

// pairIDs maps pairs to id pairs in both directions, dropping pairs with a
// word that has no vector, self pairs, repeats and those in skip; the
// result is sorted so that runs do not depend on input order.
func pairIDs(pairs []Pair, vecs *text.Vectors, vocab *text.Vocab, skip map[idPair]bool) []idPair {
	seen := map[idPair]bool{}
	var out []idPair
	for _, p := range pairs {
		a, b := vocab.ID(p[0]), vocab.ID(p[1])
		if a == b || !usable(a, p[0], vecs, vocab) || !usable(b, p[1], vecs, vocab) {
			continue
		}
		for _, q := range []idPair{{a, b}, {b, a}} {
			if !seen[q] && !skip[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	slices.SortFunc(out, func(x, y idPair) int {
		if x.i != y.i {
			return int(x.i - y.i)
		}
		return int(x.j - y.j)
	})
	return out
}

// usable reports whether id is word's own row (not UNK) with a vector.
func usable(id int32, word string, vecs *text.Vectors, vocab *text.Vocab) bool {
	return id > text.UnkID && vocab.Word(id) == word && vecs.Found[id]
}

func meanCos(vecs *text.Vectors, pairs []idPair) float64 {
	if len(pairs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, p := range pairs {
		s += float64(dot(vecs.Row(p.i), vecs.Row(p.j)))
	}
	return s / float64(len(pairs))
}

func dot(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// normalize scales x to unit length; it reports false for a zero vector.
func normalize(x []float32) bool {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	if ss == 0 {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i := range x {
		x[i] = float32(float64(x[i]) * inv)
	}
	return true
}
