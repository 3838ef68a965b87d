package main

import (
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/metrics"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// importanceWords and importancePhi are the fixture vocabulary (after
// <pad>, <unk>) and the φ the mask is built to give each word.
var (
	importanceWords = []string{"good", "great", "fine", "nice", "bad", "awful", "movie", "film", "the", "plot"}
	importancePhi   = []float64{0.95, 0.92, 0.50, 0.45, 0.05, 0.55, 0.58, 0.30, 0.42, 0.08}
)

// writeMaskedModel saves a CNN with a word mask whose φ is known: the mask
// network is φ(e) = σ(c·tanh(e_0)) (one hidden unit reading embedding
// coordinate 0, keep−drop weight c), and each word's e_0 is set to
// atanh(logit(φ)/c). <unk> gets φ 0.99 and <pad> (zero row) 0.5, so counting
// either of them would change the statistics. training is the model's
// training record.
func writeMaskedModel(t *testing.T, dir string, training map[string]any) {
	t.Helper()
	vocab, err := text.NewVocab(append([]string{text.PadWord, text.UnkWord}, importanceWords...))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Config{Arch: "cnn", EmbedDim: 2, Filters: 2, Widths: []int{1}, EmbedInit: 0.25, Mask: true, MaskHidden: 1}
	m, err := model.New(model.Meta{Net: cfg, Tokenizer: "flat", MaxLen: 3, Classes: []string{"0", "1"}, Training: training},
		vocab, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	const c = 10
	mask := m.Net.Mask
	copy(mask.Hidden.W.Value.Data, []float32{1, 0}) // [in 2, out 1]
	mask.Hidden.B.Value.Data[0] = 0
	copy(mask.Out.W.Value.Data, []float32{0, c}) // [in 1, out 2]: drop 0, keep c·h
	copy(mask.Out.B.Value.Data, []float32{0, 0})
	emb := m.Net.Emb.W.Value.Data
	set := func(id int, phi float64) {
		emb[id*2] = float32(math.Atanh(math.Log(phi/(1-phi)) / c))
	}
	set(int(text.UnkID), 0.99)
	for i, p := range importancePhi {
		set(i+2, p)
	}
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
}

// writeImportanceFixture writes the neighbour table and the training CSV.
// In the table only good, great, bad and movie have an in-vocabulary
// neighbour; the longest list has 4 entries. Word counts in the CSV
// (flat tokenizer, lower-cased, texts not truncated to the model's 3
// tokens), in vocabulary order: good 2, great 2, fine 0, nice 1, bad 1,
// awful 1, movie 2, film 1, the 5, plot 2.
func writeImportanceFixture(t *testing.T, syn, csv string) {
	t.Helper()
	table := map[string][]string{
		"good":  {"great", "fine", "nice", "superb"},
		"bad":   {"awful", "terrible"},
		"movie": {"film"},
		"the":   {},
		"plot":  {"storyline"},
		"great": {"good"},
		"zebra": {"good"},
	}
	b, _ := json.Marshal(table)
	if err := os.WriteFile(syn, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := "text,label\n" +
		"the movie was good,1\n" +
		"The plot was bad and the film awful,0\n" +
		"\"great great movie , good plot\",1\n" +
		"zebra the the nice,0\n"
	if err := os.WriteFile(csv, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
}

type importanceJSON struct {
	Words     int      `json:"words"`
	MedianPhi float64  `json:"median_phi"`
	Notes     []string `json:"notes"`
	PhiStats  struct {
		Median       float64 `json:"median"`
		ShareAbove09 float64 `json:"share_above_0_9"`
		ShareBelow01 float64 `json:"share_below_0_1"`
		Share04to06  float64 `json:"share_0_4_0_6"`
	} `json:"phi_stats"`
	SynonymGap *struct {
		Synonyms          string  `json:"synonyms"`
		CandidateWords    int     `json:"candidate_words"`
		SampledWords      int     `json:"sampled_words"`
		FileMaxNeighbours int     `json:"file_max_neighbours"`
		Pairs             int     `json:"pairs"`
		Mean              float64 `json:"mean"`
		Variance          float64 `json:"variance"`
		Quartiles         struct {
			Min, Q1, Median, Q3, Max float64
		} `json:"quartiles"`
		Deviation string `json:"deviation"`
	} `json:"synonym_gap"`
	Correlations *struct {
		Words int                    `json:"words"`
		WIWF  *importanceCorrelation `json:"wi_wf"`
		WISF  *importanceCorrelation `json:"wi_sf"`
		WFSF  *importanceCorrelation `json:"wf_sf"`
	} `json:"correlations"`
}

type importanceCorrelation struct {
	R     *float64 `json:"r"`
	P     *float64 `json:"p"`
	N     int      `json:"n"`
	Error string   `json:"error"`
}

func runImportanceJSON(t *testing.T, args ...string) importanceJSON {
	t.Helper()
	code, stdout, stderr := runCmd(t, append([]string{"importance", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("importance %v: exit %d: %s", args, code, stderr)
	}
	var out importanceJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("importance --json output %q: %v", stdout, err)
	}
	return out
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestImportanceDiagnostics(t *testing.T) {
	dir := t.TempDir()
	syn, csv := filepath.Join(dir, "syn.json"), filepath.Join(dir, "train.csv")
	writeImportanceFixture(t, syn, csv)
	mdir := filepath.Join(dir, "model")
	writeMaskedModel(t, mdir, map[string]any{"defense": "flat",
		"substitution_counts": map[string]int{"good": 5, "great": 3, "bad": 4, "awful": 4, "film": 1, "superb": 7}})
	loaded, err := model.Load(mdir)
	if err != nil {
		t.Fatal(err)
	}
	phi := loaded.Net.WordImportance()
	for i, want := range importancePhi {
		if got := float64(phi[i+2]); !near(got, want, 1e-4) {
			t.Fatalf("fixture φ(%s) = %g, want %g", importanceWords[i], got, want)
		}
	}
	emptyData := filepath.Join(dir, "nodata")

	out := runImportanceJSON(t, "--model", mdir, "--synonyms", syn, "--train", csv, "--data", emptyData)
	if len(out.Notes) != 0 {
		t.Errorf("notes with every input given: %v", out.Notes)
	}
	// φ over the 10 real words: sorted .05 .08 .30 .42 .45 .50 .55 .58 .92
	// .95; <pad> (0.5) and <unk> (0.99) must not count.
	ps := out.PhiStats
	if out.Words != 10 || !near(ps.Median, 0.475, 1e-4) || !near(out.MedianPhi, ps.Median, 0) ||
		ps.ShareAbove09 != 0.2 || ps.ShareBelow01 != 0.2 || ps.Share04to06 != 0.5 {
		t.Errorf("phi stats %+v (words %d, median_phi %g), want median 0.475, shares 0.2, 0.2, 0.5", ps, out.Words, out.MedianPhi)
	}

	// Synonym gap: the 4 words with in-vocabulary neighbours, all sampled;
	// pairs good–great .03, good–fine .45, good–nice .50, great–good .03,
	// bad–awful .50, movie–film .28 (superb, terrible, storyline are out of
	// the vocabulary; zebra is not a vocabulary word).
	g := out.SynonymGap
	if g == nil {
		t.Fatal("no synonym_gap")
	}
	gaps := []float64{0.03, 0.03, 0.28, 0.45, 0.50, 0.50}
	var mean, sq float64
	for _, x := range gaps {
		mean += x / 6
		sq += x * x / 6
	}
	q := g.Quartiles
	if g.Synonyms != syn || g.CandidateWords != 4 || g.SampledWords != 4 || g.Pairs != 6 || g.FileMaxNeighbours != 4 {
		t.Errorf("gap counts %+v, want 4 candidates, 4 sampled, 6 pairs, longest list 4", *g)
	}
	// Quartiles by linear interpolation: q1 = .03 + .25(.28−.03), median
	// (.28+.45)/2, q3 = .45 + .75(.50−.45).
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", g.Mean, mean}, {"variance", g.Variance, sq - mean*mean},
		{"min", q.Min, 0.03}, {"q1", q.Q1, 0.0925}, {"median", q.Median, 0.365}, {"q3", q.Q3, 0.4875}, {"max", q.Max, 0.50}} {
		if !near(c.got, c.want, 2e-4) {
			t.Errorf("gap %s = %.6f, want %.6f", c.name, c.got, c.want)
		}
	}
	if !strings.Contains(g.Deviation, "at most 4") || !strings.Contains(g.Deviation, "10 nearest") {
		t.Errorf("deviation %q", g.Deviation)
	}

	// Correlations over the 10 words. WF and SF are integers, so WF–SF is
	// exact: a reference computed once with mpmath (r from the definition,
	// p = I_{1−r²}(4, 1/2)). The WI ones use the designed φ (tolerance for
	// the float32 mask) and, exactly, metrics.Pearson on the loaded φ.
	wf := []float64{2, 2, 0, 1, 1, 1, 2, 1, 5, 2}
	sf := []float64{5, 3, 0, 0, 4, 4, 0, 1, 0, 0} // superb is not in the vocabulary
	wi := make([]float64, 10)
	for i := range wi {
		wi[i] = float64(phi[i+2])
	}
	c := out.Correlations
	if c == nil || c.WIWF == nil || c.WISF == nil || c.WFSF == nil || c.Words != 10 {
		t.Fatalf("correlations %+v", c)
	}
	for _, k := range []struct {
		name      string
		got       *importanceCorrelation
		x, y      []float64
		r, p, tol float64
	}{
		{"wi_wf", c.WIWF, wi, wf, 0.096824237854953413, 0.79017147461513696, 1e-4},
		{"wi_sf", c.WISF, wi, sf, 0.36865519141956736, 0.29451841206968265, 1e-4},
		{"wf_sf", c.WFSF, wf, sf, -0.15746686498048538, 0.66395604778177674, 1e-12},
	} {
		if k.got.R == nil || k.got.P == nil || k.got.N != 10 || k.got.Error != "" {
			t.Errorf("%s: %+v", k.name, *k.got)
			continue
		}
		r, p, err := metrics.Pearson(k.x, k.y)
		if err != nil {
			t.Fatal(err)
		}
		if *k.got.R != r || *k.got.P != p {
			t.Errorf("%s: r %.17g p %.17g, recomputed %.17g %.17g", k.name, *k.got.R, *k.got.P, r, p)
		}
		if !near(*k.got.R, k.r, k.tol) || !near(*k.got.P, k.p, k.tol) {
			t.Errorf("%s: r %.17g p %.17g, want %.17g %.17g", k.name, *k.got.R, *k.got.P, k.r, k.p)
		}
	}

	// Same seed, same sample; a 2-word sample draws 2 of the 4 candidates
	// (good has 3 pairs, the others 1 each).
	a := runImportanceJSON(t, "--model", mdir, "--synonyms", syn, "--gap-words", "2", "--seed", "3")
	b := runImportanceJSON(t, "--model", mdir, "--synonyms", syn, "--gap-words", "2", "--seed", "3")
	if a.SynonymGap == nil || a.SynonymGap.SampledWords != 2 || a.SynonymGap.CandidateWords != 4 ||
		(a.SynonymGap.Pairs != 2 && a.SynonymGap.Pairs != 4) || *a.SynonymGap != *b.SynonymGap {
		t.Errorf("2-word sample: %+v vs %+v", a.SynonymGap, b.SynonymGap)
	}

	// The text output has both sections and the deviation.
	code, stdout, stderr := runCmd(t, "importance", "--model", mdir, "--synonyms", syn, "--train", csv, "--top", "3")
	if code != 0 {
		t.Fatalf("text output: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"median φ 0.4750", "20.0% > 0.9", "synonym importance gap", "6 pairs from 4 of 4 words",
		"deviation: spec §9.3", "Pearson correlations over 10", "WI–WF  r +0.0968", "WF–SF  r -0.1575", "p 0.664"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "note:") {
		t.Errorf("text output has notes:\n%s", stdout)
	}
}

func TestImportanceDiagnosticsMissingInputs(t *testing.T) {
	dir := t.TempDir()
	syn, csv := filepath.Join(dir, "syn.json"), filepath.Join(dir, "train.csv")
	writeImportanceFixture(t, syn, csv)
	bare := filepath.Join(dir, "bare")
	writeMaskedModel(t, bare, nil)
	emptyData := filepath.Join(dir, "nodata")

	// No default synonyms, no data, no substitution record: notes only.
	out := runImportanceJSON(t, "--model", bare, "--data", emptyData)
	if out.SynonymGap != nil || out.Correlations != nil || len(out.Notes) != 3 {
		t.Errorf("bare run: gap %v correlations %v notes %q", out.SynonymGap, out.Correlations, out.Notes)
	}
	wantDefault := filepath.Join(emptyData, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json")
	if notes := strings.Join(out.Notes, "\n"); !strings.Contains(notes, wantDefault) ||
		!strings.Contains(notes, "substitution_counts") || !strings.Contains(notes, "--dataset") {
		t.Errorf("notes %q", out.Notes)
	}
	code, stdout, _ := runCmd(t, "importance", "--model", bare, "--data", emptyData)
	if code != 0 || strings.Count(stdout, "note: ") != 3 || strings.Contains(stdout, "synonym importance gap |") {
		t.Errorf("bare text run: exit %d:\n%s", code, stdout)
	}
	// Without any data folder the gap is skipped the same way, saying how
	// to give a table (it said "no neighbour table at " with no path).
	t.Setenv("TEXTARMOR_DATA", "")
	out = runImportanceJSON(t, "--model", bare)
	if notes := strings.Join(out.Notes, "\n"); out.SynonymGap != nil || !strings.Contains(notes, "no neighbour table (give one with --synonyms FILE, or --data DIR)") {
		t.Errorf("run without a data folder: notes %q", out.Notes)
	}

	// The default table under --data is used when present; WF alone gives
	// only WI–WF.
	data := filepath.Join(dir, "data")
	def := filepath.Join(data, "counterfitted-neighbors-jia2019", "counterfitted_neighbors.json")
	if err := os.MkdirAll(filepath.Dir(def), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(syn)
	if err := os.WriteFile(def, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out = runImportanceJSON(t, "--model", bare, "--data", data, "--train", csv)
	if out.SynonymGap == nil || out.SynonymGap.Synonyms != def || out.SynonymGap.Pairs != 6 {
		t.Errorf("default table: %+v", out.SynonymGap)
	}
	if c := out.Correlations; c == nil || c.WIWF == nil || c.WIWF.R == nil || c.WISF != nil || c.WFSF != nil {
		t.Errorf("WF only: %+v", c)
	}
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "substitution_counts") {
		t.Errorf("WF only notes %q", out.Notes)
	}

	// A record of no substitutions (null): SF is constant, its correlations
	// are reported as undefined rather than failing.
	nullSF := filepath.Join(dir, "nullsf")
	writeMaskedModel(t, nullSF, map[string]any{"substitution_counts": nil})
	out = runImportanceJSON(t, "--model", nullSF, "--data", emptyData, "--train", csv)
	if c := out.Correlations; c == nil || c.WISF == nil || c.WISF.R != nil || !strings.Contains(c.WISF.Error, "constant") ||
		c.WFSF == nil || c.WFSF.Error == "" || c.WIWF == nil || c.WIWF.R == nil {
		t.Errorf("null substitution record: %+v", c)
	}

	// An explicitly given missing table is an error naming it.
	missing := filepath.Join(dir, "no-such-table.json")
	if code, _, stderr := runCmd(t, "importance", "--model", bare, "--synonyms", missing); code != 1 || !strings.Contains(stderr, missing) {
		t.Errorf("missing --synonyms: exit %d: %s", code, stderr)
	}
	// A bad sample size is a usage error.
	if code, _, _ := runCmd(t, "importance", "--model", bare, "--gap-words", "0"); code != 2 {
		t.Errorf("--gap-words 0: exit %d", code)
	}
}
