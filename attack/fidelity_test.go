package attack

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// hyphenTask: a victim that is positive iff "good" or "fine" is present,
// read through a tokenizer that splits "not-fine" into not and fine.
// "good" has two out-of-vocabulary substitutes: "not-fine", which still
// reads as positive, and "bad-ish", which does not. Scoring either as one
// unknown word claims a success with "not-fine" that the written text
// does not give.
func hyphenTask() (Target, *lexicon.Neighbors) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "the", "movie", "is", "good", "fine", "not", "bad", "ish"})
	m := &linear{w: map[int32]float64{vocab.ID("good"): 4, vocab.ID("fine"): 4}, bias: -2}
	syn := lexicon.NewNeighbors("test")
	syn.Set("good", []string{"not-fine", "bad-ish"})
	return Target{Victim: m, Vocab: vocab, Tok: text.NewFlat(), MaxLen: 30, InputGrad: m.inputGrad}, syn
}

// TestAttackScoresTheTextItWrites: every search must claim only successes
// whose written text fools the model when read back, and RunAll must say
// they were verified. (linear has no incremental path;
// TestPhrasesOnRecurrentVictims covers it.)
func TestAttackScoresTheTextItWrites(t *testing.T) {
	for name, s := range searches() {
		{
			tg, syn := hyphenTask()
			a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: s, OOVAsUnk: true}
			rs, err := RunAll(context.Background(), a, tg, []Example{{Text: "the movie is good", Label: 1}}, RunOptions{Workers: 1, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			if r.Type != Successful {
				t.Fatalf("%s: %s (%s); bad-ish fools the model", name, r.Type, r.Note)
			}
			if p := tg.Read([]string{r.PerturbedText})[0]; p[1] >= p[0] {
				t.Fatalf("%s: claimed success %q reads as positive (%v)", name, r.PerturbedText, p)
			}
			if !strings.Contains(r.PerturbedText, "bad-ish") || r.Check != Verified {
				t.Fatalf("%s: wrote %q, check %v", name, r.PerturbedText, r.Check)
			}
			if sm := Summarize(rs); sm.Verified != 1 || sm.Mismatched != 0 {
				t.Fatalf("%s: summary verified %d mismatched %d", name, sm.Verified, sm.Mismatched)
			}
		}
	}
}

// TestCheckResultsFindsMismatch: a result whose text does not fool the
// model is counted as a mismatch, not a success silently.
func TestCheckResultsFindsMismatch(t *testing.T) {
	tg, _ := hyphenTask()
	rs := []Result{
		{Type: Successful, GroundTruth: 1, PerturbedText: "the movie is not-fine"},
		{Type: Successful, GroundTruth: 1, PerturbedText: "the movie is bad-ish"},
		{Type: Failed, GroundTruth: 1, PerturbedText: "the movie is good"},
	}
	if bad := CheckResults(Untargeted{}, tg, rs); bad != 1 {
		t.Fatalf("%d mismatches, want 1", bad)
	}
	if rs[0].Check != Mismatch || rs[1].Check != Verified || rs[2].Check != Unchecked {
		t.Fatalf("checks %v %v %v", rs[0].Check, rs[1].Check, rs[2].Check)
	}
	if sm := Summarize(rs); sm.Verified != 1 || sm.Mismatched != 1 {
		t.Fatalf("summary verified %d mismatched %d", sm.Verified, sm.Mismatched)
	}
}

// TestPWWSWeighsAsTextAttack: PWWS weighs each position's softmax
// saliency by the goal score after its best swap (TextAttack's code), not
// by the gain over the original score (Ren et al., the FTML protocol).
// Built so the two orders differ: initial score 0.4; softmax saliency
// 0.6 for "a", 0.4 for "b"; best swaps reach 0.49 at a, 0.6 at b.
// TextAttack visits a first (0.6·0.49 > 0.4·0.6) and needs both swaps;
// the gain order visits b first (0.4·0.2 > 0.6·0.09) and flips with one.
func TestPWWSWeighsAsTextAttack(t *testing.T) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "a", "b", "a2", "b2"})
	m := &linear{bias: -2.582689018737714, w: map[int32]float64{vocab.ID("a"): 2.6026896854443833, vocab.ID("b"): 0.3854644414014948,
		vocab.ID("a2"): 2.2372299119499184, vocab.ID("b2"): -0.4254657748148337}}
	syn := lexicon.NewNeighbors("test")
	syn.Set("a", []string{"a2"})
	syn.Set("b", []string{"b2"})
	tg := Target{Victim: m, Vocab: vocab, Tok: text.NewWhitespace()}
	for _, c := range []struct {
		gain      bool
		perturbed int
		text      string
	}{{false, 2, "a2 b2"}, {true, 1, "a b2"}} {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByPWWS, PWWSGain: c.gain}}
		r, err := a.Run(tg, Example{Text: "a b", Label: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != Successful || r.NumPerturbed != c.perturbed || r.PerturbedText != c.text {
			t.Fatalf("gain %v: %s %q with %d words changed; want %q", c.gain, r.Type, r.PerturbedText, r.NumPerturbed, c.text)
		}
	}
}

// TestQueriesCountedBothWays: NumQueries counts distinct inputs the model
// scored, NumRequests every input scored for the search (TextAttack's
// count). Greedy re-asks for candidates it has scored while ranking, so
// the second is larger, and the summary reports both.
func TestQueriesCountedBothWays(t *testing.T) {
	tg, syn, ex := synthTask()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByPWWS}}
	rs, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	more := 0
	for _, r := range rs {
		if r.NumRequests < r.NumQueries {
			t.Fatalf("example %d: %d requests < %d distinct queries", r.Index, r.NumRequests, r.NumQueries)
		}
		if r.NumRequests > r.NumQueries {
			more++
		}
	}
	if more == 0 {
		t.Fatal("no example asked for an input twice: the cache-hit count is not counted")
	}
	if sm := Summarize(rs); !(sm.AvgQueriesWithRepeats > sm.AvgQueries) {
		t.Fatalf("summary: %v with repeats, %v distinct", sm.AvgQueriesWithRepeats, sm.AvgQueries)
	}
}

// TestOlderResultsFileRefused: a results file from before the
// num_queries_with_repeats column is refused by name, not misread.
func TestOlderResultsFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.csv")
	old := strings.Join(Columns[:len(Columns)-1], ",") + "\na b,a c,1,0,1,10,Successful,0,0.1,2,1\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadCSV(path); err == nil || !strings.Contains(err.Error(), "older textarmor") {
		t.Fatalf("older file: %v", err)
	}
}

// TestRecipeNeeds: each recipe declares the resources it reads, so a
// caller loads those and no others.
func TestRecipeNeeds(t *testing.T) {
	cases := []struct {
		recipe, protocol string
		want             Needs
	}{
		{"pwws", ProtocolPaper, Needs{WordNet: true, OOV: true}},
		{"pwws", ProtocolFTML, Needs{Synonyms: true}},
		{"textfooler", ProtocolFLAT, Needs{Synonyms: true, Nearest: true, NearestK: 50, NearestCos: 0.5, Tagger: true, OOV: true}},
		{"ga", ProtocolPaper, Needs{Synonyms: true, Nearest: true, NearestK: 8, NearestCos: 0.75, LM: true, OOV: true}},
		{"alzantot", ProtocolFTML, Needs{Synonyms: true, NearestK: 8, NearestCos: 0.75}},
		{"pso", ProtocolFTML, Needs{Synonyms: true, NearestK: 50, NearestCos: 0.5}},
		{"iga", ProtocolFLAT, Needs{Synonyms: true, Nearest: true, NearestK: 50, NearestCos: 0.75, OOV: true}},
		{"hla", ProtocolFTML, Needs{Synonyms: true, Encoder: true, NearestK: 50, NearestCos: 0.5}},
		{"hla", ProtocolPaper, Needs{Synonyms: true, Nearest: true, NearestK: 50, NearestCos: 0.5, Encoder: true, OOV: true}},
	}
	for _, c := range cases {
		rc, err := LookupRecipe(c.recipe)
		if err != nil {
			t.Fatal(err)
		}
		if got := rc.Needs(c.protocol); got != c.want {
			t.Errorf("%s under %q needs %+v, want %+v", c.recipe, c.protocol, got, c.want)
		}
	}
}

// TestSampleOrderAndExamplesOf: the first n, or the first n of a seeded
// permutation (the same for the same seed), each example keeping its
// index in the split.
func TestSampleOrderAndExamplesOf(t *testing.T) {
	if got := SampleOrder(5, 3, 9, false); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("first 3: %v", got)
	}
	a, b := SampleOrder(50, 10, 9, true), SampleOrder(50, 10, 9, true)
	if !slices.Equal(a, b) || slices.Equal(a, SampleOrder(50, 10, 9, false)) || len(SampleOrder(50, 0, 9, true)) != 50 {
		t.Fatalf("seeded sample %v, %v", a, b)
	}
	split := []dataset.Example{{Text: "a", Label: 0}, {Text: "b", Label: 1}, {Text: "c", Label: 1}}
	ex := ExamplesOf(split, []int{2, 0})
	if len(ex) != 2 || ex[0] != (Example{Index: 2, Text: "c", Label: 1}) || ex[1] != (Example{Index: 0, Text: "a", Label: 0}) {
		t.Fatalf("ExamplesOf = %+v", ex)
	}
}

// TestPhrasesOnRecurrentVictims: on an LSTM, whose incremental paths
// (edits, deletions, the GA's family sweep) need sequences of one length,
// substitutes the tokenizer splits must take the full path: every search
// runs without a panic, each claimed success reads back as one, the
// results equal those without the incremental path, and the queries with
// repeats are never fewer than the distinct ones.
func TestPhrasesOnRecurrentVictims(t *testing.T) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "the", "movie", "is", "good", "fine", "not", "bad", "ish", "plot", "and"})
	cfg := nn.DefaultConfig("lstm")
	cfg.VocabSize, cfg.NumClasses, cfg.EmbedDim, cfg.Hidden = vocab.Len(), 2, 8, 6
	net, err := nn.New(cfg, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	syn := lexicon.NewNeighbors("test")
	syn.Set("good", []string{"not-fine", "bad-ish", "fine"})
	syn.Set("plot", []string{"is-not", "movie"})
	syn.Set("movie", []string{"plot", "bad-movie"})
	texts := []string{"the movie is good and the plot is good", "the plot and the movie is good", "good movie good plot"}
	target := func(noInc bool) Target {
		return Target{Victim: net, Vocab: vocab, Tok: text.NewFlat(), MaxLen: 30, InputGrad: net.InputGradL1, NoIncremental: noInc}
	}
	var ex []Example
	for i, x := range texts {
		p := target(true).Read([]string{x})[0]
		ex = append(ex, Example{Index: i, Text: x, Label: nn.Argmax(p)})
	}
	for name, s := range searches() {
		if name == "hla" {
			continue // needs a sentence encoder over the vocabulary
		}
		var runs [2][]Result
		for k, noInc := range []bool{false, true} {
			a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: s, OOVAsUnk: true}
			rs, err := RunAll(context.Background(), a, target(noInc), ex, RunOptions{Workers: 1, Seed: 1})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, r := range rs {
				if r.Type == Successful && r.Check != Verified {
					t.Errorf("%s (no incremental %v): example %d's success %q does not read back as one", name, noInc, r.Index, r.PerturbedText)
				}
				if r.Type != Skipped && r.NumRequests < r.NumQueries {
					t.Errorf("%s (no incremental %v): example %d: %d requests < %d distinct queries", name, noInc, r.Index, r.NumRequests, r.NumQueries)
				}
			}
			runs[k] = rs
		}
		for i := range runs[0] {
			a, b := runs[0][i], runs[1][i]
			if a.Type != b.Type || a.PerturbedText != b.PerturbedText || a.NumQueries != b.NumQueries || a.NumRequests != b.NumRequests {
				t.Errorf("%s: example %d differs with the incremental path: %s %q %d/%d vs %s %q %d/%d", name, i,
					a.Type, a.PerturbedText, a.NumQueries, a.NumRequests, b.Type, b.PerturbedText, b.NumQueries, b.NumRequests)
			}
		}
	}
}

// TestReadCSVNamesTheBadLine: a bad row inside a results file is reported
// at its own line, not at the row read after it.
func TestReadCSVNamesTheBadLine(t *testing.T) {
	header := strings.Join(Columns, ",") + "\n"
	good := "a b,a c,1,0,1,5,Successful,0,0.1,2,1,6\n"
	for _, c := range []struct{ name, bad, want string }{
		{"field", "a b,a c,1,x,1,5,Successful,1,0.1,2,1,6\n", ":3: perturbed_output"},
		{"quote", "a b,a \"c,1,0,1,5,Successful,1,0.1,2,1,6\n", ":3: "},
	} {
		path := filepath.Join(t.TempDir(), c.name+".csv")
		if err := os.WriteFile(path, []byte(header+good+c.bad+good), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadCSV(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
