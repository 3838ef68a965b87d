package counterfit

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// fixture returns a vocabulary and seeded random vectors for words; rows
// listed in missing have no vector.
func fixture(t *testing.T, dim int, seed int64, missing ...string) (*text.Vocab, *text.Vectors) {
	t.Helper()
	words := []string{text.PadWord, text.UnkWord, "good", "fine", "nice", "bad", "awful", "table", "desk", "car", "auto", "rare"}
	vocab, err := text.NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	vs := &text.Vectors{Dim: dim, Data: make([]float32, len(words)*dim), Found: make([]bool, len(words))}
	for id := 2; id < len(words); id++ {
		if slices.Contains(missing, words[id]) {
			continue
		}
		vs.Found[id] = true
		for d := range dim {
			vs.Data[id*dim+d] = float32(rng.NormFloat64())
		}
	}
	return vocab, vs
}

func cos(vs *text.Vectors, v *text.Vocab, a, b string) float64 {
	return tensor.Cosine(vs.Row(v.ID(a)), vs.Row(v.ID(b)))
}

func TestFitPullsSynonymsAndPushesAntonyms(t *testing.T) {
	vocab, vs := fixture(t, 16, 1)
	// good and bad start close, as distributional vectors of antonyms do.
	copy(vs.Row(vocab.ID("bad")), vs.Row(vocab.ID("good")))
	vs.Row(vocab.ID("bad"))[0] += 0.5
	tableBefore := slices.Clone(vs.Row(vocab.ID("table")))
	syn := []Pair{{"good", "fine"}, {"fine", "nice"}, {"bad", "awful"}}
	ant := []Pair{{"good", "bad"}, {"nice", "awful"}}
	beforeSyn, beforeAnt := cos(vs, vocab, "good", "fine"), cos(vs, vocab, "good", "bad")
	opt := DefaultOptions()
	opt.K3 = 0
	st, err := Fit(vs, vocab, syn, ant, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Synonyms != 6 || st.Antonyms != 4 || st.Words != 10 {
		t.Errorf("stats %+v: want 6 synonym and 4 antonym ordered pairs over 10 words", st)
	}
	if got := cos(vs, vocab, "good", "fine"); got < 0.8 || got <= beforeSyn {
		t.Errorf("synonyms: cos %.3f → %.3f, want pulled above 0.8", beforeSyn, got)
	}
	// δ = 1: antonyms are pushed until they are (about) orthogonal.
	if got := cos(vs, vocab, "good", "bad"); got > 0.05 || beforeAnt < 0.9 {
		t.Errorf("antonyms: cos %.3f → %.3f, want ≤ 0.05", beforeAnt, got)
	}
	if st.SynCosAfter <= st.SynCosBefore || st.AntCosAfter >= st.AntCosBefore {
		t.Errorf("stats %+v: synonym cosine must rise, antonym cosine fall", st)
	}
	// Every row with a vector ends unit-length; an unconstrained word keeps
	// its direction.
	for id := 2; id < vocab.Len(); id++ {
		var ss float64
		for _, x := range vs.Row(int32(id)) {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("%s: squared norm %v, want 1", vocab.Word(int32(id)), ss)
		}
	}
	if c := tensor.Cosine(tableBefore, vs.Row(vocab.ID("table"))); c < 1-1e-6 {
		t.Errorf("unconstrained word moved: cos to its original %v", c)
	}
}

// One step by hand: two synonyms and an antonym of the first, each moved by
// the mean of its terms, then renormalised.
func TestFitOneStepByHand(t *testing.T) {
	vocab, vs := fixture(t, 4, 2)
	copy(vs.Row(vocab.ID("bad")), vs.Row(vocab.ID("good")))
	vs.Row(vocab.ID("bad"))[1] += 0.7
	for id := range vocab.Len() {
		normalize(vs.Row(int32(id)))
	}
	g, f, b := slices.Clone(vs.Row(vocab.ID("good"))), slices.Clone(vs.Row(vocab.ID("fine"))), slices.Clone(vs.Row(vocab.ID("bad")))
	d := func(x, y []float32) float64 {
		var s float64
		for i := range x {
			s += float64(x[i]) * float64(y[i])
		}
		return s
	}
	grad := func(u, v []float32) []float64 { // ∂(1 − u·v)/∂u on the sphere
		uv := d(u, v)
		out := make([]float64, len(u))
		for i := range u {
			out[i] = float64(u[i])*uv - float64(v[i])
		}
		return out
	}
	const k = 0.1
	want := map[string][]float64{}
	// good: synonym term towards fine and antonym term away from bad, averaged.
	gs, ga := grad(g, f), grad(g, b)
	for i := range g {
		want["good"] = append(want["good"], float64(g[i])+(-k*gs[i]+k*ga[i])/2)
	}
	fs := grad(f, g)
	for i := range f {
		want["fine"] = append(want["fine"], float64(f[i])-k*fs[i])
	}
	bg := grad(b, g)
	for i := range b {
		want["bad"] = append(want["bad"], float64(b[i])+k*bg[i])
	}
	if 1-d(g, b) >= 1 {
		t.Fatal("fixture: good and bad must start closer than δ")
	}
	opt := DefaultOptions()
	opt.Iters, opt.K3 = 1, 0
	if _, err := Fit(vs, vocab, []Pair{{"good", "fine"}}, []Pair{{"good", "bad"}}, opt); err != nil {
		t.Fatal(err)
	}
	for w, x := range want {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		for i, v := range vs.Row(vocab.ID(w)) {
			if e := x[i] / math.Sqrt(ss); math.Abs(float64(v)-e) > 1e-6 {
				t.Fatalf("%s[%d] = %v, want %v", w, i, v, e)
			}
		}
	}
}

// Preservation keeps words that were close in the original space close
// while a synonym pulls one of them away.
func TestFitPreservationTerm(t *testing.T) {
	run := func(k3 float64) float64 {
		vocab, vs := fixture(t, 8, 3)
		car, auto := vs.Row(vocab.ID("car")), vs.Row(vocab.ID("auto"))
		copy(auto, car)
		auto[0] += 0.3 // cosine about 0.99: within ρ = 0.2
		opt := DefaultOptions()
		opt.K3 = k3
		st, err := Fit(vs, vocab, []Pair{{"car", "desk"}}, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		if k3 > 0 && st.VSP < 2 {
			t.Fatalf("VSP pairs %d: car and auto must be one (both ways)", st.VSP)
		}
		return cos(vs, vocab, "car", "auto")
	}
	with, without := run(0.1), run(0)
	if with <= without+0.01 {
		t.Errorf("cos(car, auto) with preservation %.3f, without %.3f: preservation must keep them closer", with, without)
	}
}

func TestFitIgnoresUnusablePairsAndOrder(t *testing.T) {
	syn := []Pair{{"good", "fine"}, {"fine", "nice"}, {"good", "good"}, {"good", "zzz"}, {"rare", "good"}, {"table", "desk"}, {"fine", "good"}}
	ant := []Pair{{"good", "bad"}, {"good", "fine"}}
	run := func(syn, ant []Pair) (*text.Vectors, Stats) {
		vocab, vs := fixture(t, 8, 4, "rare")
		st, err := Fit(vs, vocab, syn, ant, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return vs, st
	}
	vs, st := run(syn, ant)
	// good–fine is an antonym pair too, so only fine–nice and table–desk
	// remain synonyms; self pairs, unknown words and words without vectors
	// are dropped.
	if st.Synonyms != 4 || st.Antonyms != 4 {
		t.Errorf("stats %+v: want 4 synonym and 4 antonym ordered pairs", st)
	}
	rev := slices.Clone(syn)
	slices.Reverse(rev)
	vs2, _ := run(rev, []Pair{ant[1], ant[0]})
	if !slices.Equal(vs.Data, vs2.Data) {
		t.Error("the result depends on the order of the constraints")
	}
}

func TestFitRejectsBadInput(t *testing.T) {
	vocab, vs := fixture(t, 4, 5)
	opt := DefaultOptions()
	opt.Delta = 3
	if _, err := Fit(vs, vocab, nil, nil, opt); err == nil {
		t.Error("δ = 3: no error")
	}
	vs.Data = vs.Data[:8]
	if _, err := Fit(vs, vocab, nil, nil, DefaultOptions()); err == nil {
		t.Error("short vectors: no error")
	}
}

func TestReadPairs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "syn.txt")
	os.WriteFile(good, []byte("Mediaeval medieval\n\nfemales males \n"), 0o644)
	got, err := ReadPairs(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Pair{{"mediaeval", "medieval"}, {"females", "males"}}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("a b\nlonely\n"), 0o644)
	if _, err := ReadPairs(bad); err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("error %v, want one naming bad.txt:2", err)
	}
	if _, err := ReadPairs(filepath.Join(dir, "none.txt")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestSimLex(t *testing.T) {
	vocab, vs := fixture(t, 8, 6, "rare")
	path := filepath.Join(t.TempDir(), "SimLex-999.txt")
	// Gold scores follow the vectors' cosines for three pairs, so ρ = 1;
	// a pair with a word lacking a vector and one outside the vocabulary
	// are skipped.
	type pr struct{ a, b string }
	ps := []pr{{"good", "fine"}, {"table", "desk"}, {"car", "auto"}}
	slices.SortFunc(ps, func(x, y pr) int {
		return int(math.Copysign(1, cos(vs, vocab, x.a, x.b)-cos(vs, vocab, y.a, y.b)))
	})
	var b strings.Builder
	b.WriteString("word1\tword2\tPOS\tSimLex999\r\n")
	for i, p := range ps {
		b.WriteString(p.a + "\t" + p.b + "\tN\t" + string(rune('1'+i)) + ".5\r\n")
	}
	b.WriteString("rare\tgood\tA\t9.0\r\nzzz\tgood\tA\t1.0\r\n")
	os.WriteFile(path, []byte(b.String()), 0o644)
	rho, n, err := SimLex(path, vs, vocab)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || math.Abs(rho-1) > 1e-12 {
		t.Errorf("ρ = %v over %d pairs, want 1 over 3", rho, n)
	}
	os.WriteFile(path, []byte("header\ngood\tfine\n"), 0o644)
	if _, _, err := SimLex(path, vs, vocab); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("short line: error %v, want one naming line 2", err)
	}
}
