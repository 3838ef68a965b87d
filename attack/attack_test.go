package attack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// linear is a bag-of-words victim: logit(class 1) = Σ weight[id] + bias.
type linear struct {
	w     map[int32]float64
	bias  float64
	calls atomic.Int64 // Predict calls
	seqs  atomic.Int64 // sequences scored
}

func (m *linear) Predict(seqs [][]int32) [][]float32 {
	m.calls.Add(1)
	m.seqs.Add(int64(len(seqs)))
	out := make([][]float32, len(seqs))
	for k, s := range seqs {
		z := m.bias
		for _, id := range s {
			z += m.w[id]
		}
		p := 1 / (1 + math.Exp(-z))
		out[k] = []float32{float32(1 - p), float32(p)}
	}
	return out
}

// oneWord builds a victim that is positive iff "good" is present, and a
// synonym table where "good" can become "fine" or "nice", "movie" can become
// "film" (harmless) and "the" (a stop word) could become "a".
func oneWord() (Target, *lexicon.Neighbors, *linear) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "the", "a", "movie", "film", "was", "good", "fine", "nice", "truly", "really"})
	m := &linear{w: map[int32]float64{vocab.ID("good"): 4}, bias: -2}
	syn := lexicon.NewNeighbors("test")
	syn.Set("good", []string{"fine", "nice"})
	syn.Set("movie", []string{"film"})
	syn.Set("the", []string{"a"})
	syn.Set("truly", []string{"really"})
	return Target{Victim: m, Vocab: vocab, Tok: text.NewWhitespace(), InputGrad: m.inputGrad}, syn, m
}

// inputGrad: the gradient of the loss in a word's "embedding" (its
// presence) is proportional to its weight.
func (m *linear) inputGrad(seq []int32, _ int) []float64 {
	out := make([]float64, len(seq))
	for i, id := range seq {
		out[i] = math.Abs(m.w[id])
	}
	return out
}

func searches() map[string]Search {
	return map[string]Search{
		"greedy-delete": Greedy{Order: ByDelete},
		"greedy-unk":    Greedy{Order: ByUnk},
		"greedy-pwws":   Greedy{Order: ByPWWS},
		"pwws-reuse":    Greedy{Order: ByPWWS, ReuseBest: true},
		"greedy-random": Greedy{Order: ByRandom},
		"greedy-grad":   Greedy{Order: ByGradient},
		"beam-1":        Beam{Width: 1},
		"beam-4":        Beam{Width: 4},
		"genetic":       Genetic{PopSize: 60, Generations: 40, Temp: 0.3, MaxSynonyms: 10},
		"pso":           PSO{PopSize: 60, Iterations: 40, Omega1: 0.8, Omega2: 0.2, C1: 0.8, C2: 0.2, VMax: 3, MaxSynonyms: 10},
		"iga":           IGA{PopSize: 60, Generations: 20, Temp: 0.3, MaxReplace: 5},
		"hla":           DefaultHLA(bowEncoder{}),
	}
}

func TestOneWordFlipsWithOneSubstitution(t *testing.T) {
	tg, syn, _ := oneWord()
	for name, s := range searches() {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn},
			Pre: []PreConstraint{StopWords{Set: lexicon.FTML21()}, NoRepeat{}}, Search: s}
		for seed := int64(0); seed < 3; seed++ {
			r, err := a.Run(tg, Example{Index: 7, Text: "the movie was truly good", Label: 1}, seed)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != Successful || r.NumPerturbed != 1 || r.PerturbedOutput != 0 {
				t.Fatalf("%s: %+v", name, r)
			}
			if r.PerturbedText != "the movie was truly fine" && r.PerturbedText != "the movie was truly nice" {
				t.Fatalf("%s: perturbed text %q", name, r.PerturbedText)
			}
			if r.NumQueries < 2 {
				t.Fatalf("%s: %d queries", name, r.NumQueries)
			}
		}
	}
}

func TestTargetedAndHardLabel(t *testing.T) {
	tg, syn, _ := oneWord()
	for _, g := range []Goal{Targeted{Class: 0}, HardLabel{}} {
		a := &Attack{Goal: g, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete}}
		r, err := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 1)
		if err != nil || r.Type != Successful || r.NumPerturbed != 1 {
			t.Fatalf("%s: %+v %v", g.Name(), r, err)
		}
	}
}

func TestUnattackableWordsNeverChange(t *testing.T) {
	// The deciding word is a stop word here, or has no synonym: nothing may
	// change it, so every search fails, leaving the text as it was.
	tg, syn, m := oneWord()
	m.w = map[int32]float64{tg.Vocab.ID("the"): 4}
	for name, s := range searches() {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn},
			Pre: []PreConstraint{StopWords{Set: lexicon.FTML21()}}, Search: s}
		r, err := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 3)
		if err != nil || r.Type != Failed || r.PerturbedText != "the movie was good" || r.NumPerturbed != 0 {
			t.Fatalf("%s: %+v %v", name, r, err)
		}
	}
	m.w = map[int32]float64{tg.Vocab.ID("was"): 4}
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByUnk}}
	if r, _ := a.Run(tg, Example{Text: "was was", Label: 1}, 0); r.Type != Failed || r.Note == "" {
		t.Fatalf("no attackable word: %+v", r)
	}
}

func TestMisclassifiedIsSkipped(t *testing.T) {
	tg, syn, _ := oneWord()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByPWWS}}
	r, err := a.Run(tg, Example{Text: "the movie was good", Label: 0}, 0)
	if err != nil || r.Type != Skipped || r.NumQueries != 1 || r.PerturbedText != r.OriginalText {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestMaxModificationRate(t *testing.T) {
	// Two positive words: flipping needs both changed (2 of 8 words = 25%).
	tg, syn, m := oneWord()
	m.w = map[int32]float64{tg.Vocab.ID("good"): 3, tg.Vocab.ID("truly"): 3}
	m.bias = -2
	syn.Set("truly", []string{"really"})
	txt := "the movie was truly good the movie was"
	for _, rate := range []float64{0.25, 0.2} {
		for name, s := range searches() {
			a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn},
				Pre: []PreConstraint{MaxModificationRate{Rate: rate}}, Search: s}
			r, err := a.Run(tg, Example{Text: txt, Label: 1}, 5)
			if err != nil {
				t.Fatal(err)
			}
			if r.NumPerturbed > int(rate*8) {
				t.Fatalf("%s rate %g: %d words changed", name, rate, r.NumPerturbed)
			}
			want := Successful
			if rate < 0.25 {
				want = Failed
			}
			if r.Type != want {
				t.Fatalf("%s rate %g: %+v", name, rate, r)
			}
		}
	}
}

func TestQueryBudget(t *testing.T) {
	tg, syn, _ := oneWord()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete}, QueryBudget: 3}
	r, _ := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0)
	if r.Type != Failed || r.NumQueries > 3 {
		t.Fatalf("%+v", r)
	}
}

func TestBatchingAndCache(t *testing.T) {
	tg, syn, m := oneWord()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Genetic{PopSize: 60, Generations: 40, Temp: 0.3, MaxSynonyms: 10}}
	r, _ := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0)
	if int64(r.NumQueries) != m.seqs.Load() {
		t.Fatalf("queries %d, sequences scored %d", r.NumQueries, m.seqs.Load())
	}
	if r.NumQueries > 10 || m.calls.Load() > 4 {
		t.Fatalf("%d queries in %d calls: the cache or batching does not work", r.NumQueries, m.calls.Load())
	}
}

// synthTask is a bag-of-words victim over the synth lexicon whose synonym
// groups have graded (and partly flipped) weights, so searches must work.
func synthTask() (Target, lexicon.Source, []Example) {
	lex := synth.DefaultLexicon()
	words := []string{text.PadWord, text.UnkWord}
	w := map[string]float64{}
	syn := lexicon.NewNeighbors("synth")
	for sign, groups := range [][][]string{lex.Negative, lex.Positive} {
		for _, g := range groups {
			for j, x := range g {
				words = append(words, x)
				w[x] = float64(2*sign-1) * (2.5 - 1.2*float64(j))
				syn.Set(x, g)
			}
		}
	}
	for k, x := range lex.Neutral {
		words = append(words, x)
		w[x] = 0.1 * float64(k%5-2)
	}
	vocab, _ := text.NewVocab(words)
	m := &linear{w: map[int32]float64{}}
	for x, v := range w {
		m.w[vocab.ID(x)] = v
	}
	var ex []Example
	for i, e := range synth.Sentiment(24, 0, 9) {
		ex = append(ex, Example{Index: i, Text: e.Text, Label: e.Label})
	}
	return Target{Victim: m, Vocab: vocab, Tok: text.NewWhitespace(), MaxLen: 30, InputGrad: m.inputGrad}, syn, ex
}

// stripSeconds clears what varies between runs (Seconds) or is not in the
// CSV (Note, FinalText).
func stripSeconds(rs []Result) []Result {
	out := append([]Result(nil), rs...)
	for i := range out {
		out[i].Seconds, out[i].Note, out[i].FinalText = 0, "", ""
	}
	return out
}

func TestSameSeedAnyWorkers(t *testing.T) {
	tg, syn, ex := synthTask()
	for name, s := range searches() {
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Pre: []PreConstraint{MaxModificationRate{Rate: 0.25}}, Search: s}
		var runs [][]Result
		for _, w := range []int{1, 4} {
			rs, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: w, Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, stripSeconds(rs))
		}
		if !reflect.DeepEqual(runs[0], runs[1]) {
			t.Fatalf("%s: 1 and 4 workers differ", name)
		}
		sum := Summarize(runs[0])
		if sum.Successful == 0 || sum.N != len(ex) {
			t.Fatalf("%s: %+v", name, sum)
		}
	}
}

func TestResume(t *testing.T) {
	tg, syn, ex := synthTask()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Genetic{PopSize: 20, Generations: 10, Temp: 0.3, MaxSynonyms: 10}}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.csv")
	want, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: 2, Seed: 3, CSV: full})
	if err != nil {
		t.Fatal(err)
	}
	// Interrupt after 7 examples (one worker, so cancelling cannot race with
	// the whole set finishing), then damage the file as a crash mid-append would.
	part := filepath.Join(dir, "part.csv")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err = RunAll(ctx, a, tg, ex, RunOptions{Workers: 1, Seed: 3, CSV: part, OnResult: func(Result) {
		if n++; n == 7 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	before, _, err := ReadCSV(part)
	if err != nil || len(before) < 7 || len(before) >= len(ex) {
		t.Fatalf("after interruption %d rows, %v", len(before), err)
	}
	f, _ := os.OpenFile(part, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`"a half-written row,`)
	f.Close()
	var redone []int
	got, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: 4, Seed: 3, CSV: part, Resume: true,
		OnResult: func(r Result) { redone = append(redone, r.Index) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(redone) != len(ex)-len(before) {
		t.Fatalf("resume attacked %d examples, want %d", len(redone), len(ex)-len(before))
	}
	for _, i := range redone {
		if i < len(before) {
			t.Fatalf("resume redid example %d", i)
		}
	}
	if !reflect.DeepEqual(stripSeconds(got), stripSeconds(want)) {
		t.Fatal("resumed results differ")
	}
	a1, _, err1 := ReadCSV(full)
	a2, _, err2 := ReadCSV(part)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(stripSeconds(a1), stripSeconds(a2)) {
		t.Fatalf("final CSVs differ (%v, %v)", err1, err2)
	}
	if !reflect.DeepEqual(unchecked(a1), unchecked(want)) {
		t.Fatal("CSV does not round-trip the results")
	}
}

func TestCSVHeader(t *testing.T) {
	tg, syn, ex := synthTask()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByUnk}}
	path := filepath.Join(t.TempDir(), "r.csv")
	if _, err := RunAll(context.Background(), a, tg, ex[:3], RunOptions{CSV: path}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	header := strings.SplitN(string(b), "\n", 2)[0]
	want := "original_text,perturbed_text,original_output,perturbed_output,ground_truth_output,num_queries,result_type,index,seconds,num_words,num_perturbed,num_queries_with_repeats"
	if header != want {
		t.Fatalf("header %q", header)
	}
}

func TestSummary(t *testing.T) {
	rs := []Result{
		{Type: Successful, NumWords: 10, NumPerturbed: 1, NumQueries: 10},
		{Type: Successful, NumWords: 10, NumPerturbed: 3, NumQueries: 30},
		{Type: Failed, NumQueries: 20},
		{Type: Skipped, NumQueries: 1},
	}
	s := Summarize(rs)
	if s.OriginalAccuracy != 0.75 || s.AccuracyUnderAttack != 0.25 || math.Abs(s.AttackSuccessRate-2.0/3) > 1e-12 ||
		s.AvgPerturbedWordPct != 20 || s.AvgQueries != 20 {
		t.Fatalf("%+v", s)
	}
}

func TestRecipes(t *testing.T) {
	_, syn, _ := oneWord()
	if _, err := LookupRecipe("nope"); err == nil || !strings.Contains(err.Error(), "pwws, pso") && !strings.Contains(err.Error(), "textfooler") {
		t.Fatalf("unknown recipe error: %v", err)
	}
	for _, name := range []string{"pwws", "ga", "pso"} {
		rc, err := LookupRecipe(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := rc.Build(ProtocolFTML, Resources{Synonyms: syn})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Deviations) == 0 || c.Description == "" {
			t.Fatalf("%s: %+v", name, c)
		}
	}
	rc, _ := LookupRecipe("textfooler")
	c, err := rc.Build(ProtocolFLAT, Resources{Synonyms: syn})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(c.Deviations, "\n")
	if !strings.Contains(joined, "USE") || !strings.Contains(joined, "part-of-speech") || !strings.Contains(joined, "neighbour") {
		t.Fatalf("textfooler deviations: %v", c.Deviations)
	}
	if rc, _ := LookupRecipe("hla"); rc.Name == "hla" {
		if _, err := rc.Build("", Resources{Synonyms: syn}); err == nil {
			t.Fatal("hla built without a sentence encoder")
		}
	}
}

func TestFailedAttackKeepsItsFinalText(t *testing.T) {
	// "good" is worth 4 and "fine" 2: swapping helps the attack but cannot
	// flip (logit 2 + 2 − 1 > 0). The result stays the original (as in
	// TextAttack) and FinalText holds the partial perturbation.
	tg, syn, m := oneWord()
	m.w = map[int32]float64{tg.Vocab.ID("good"): 4, tg.Vocab.ID("fine"): 2, tg.Vocab.ID("nice"): 3, tg.Vocab.ID("movie"): 2}
	m.bias = -1
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete}}
	r, err := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 0)
	if err != nil || r.Type != Failed || r.PerturbedText != r.OriginalText || r.NumPerturbed != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	if r.FinalText != "the film was fine" {
		t.Fatalf("final text %q, want %q", r.FinalText, "the film was fine")
	}
	// An attack that changed nothing has no final text.
	m.w = map[int32]float64{tg.Vocab.ID("was"): 4}
	if r, _ := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 0); r.Type != Failed || r.FinalText != "" {
		t.Fatalf("unchanged: %+v", r)
	}
}

func TestOOVSubstitutesReachTheModelAsUnk(t *testing.T) {
	// Only an out-of-vocabulary synonym ("grand", UNK to the model) flips
	// the victim: with OOVAsUnk the attack finds it and writes the word
	// itself into the text; restricted to the vocabulary it fails.
	tg, syn, m := oneWord()
	v := tg.Vocab
	m.w = map[int32]float64{v.ID("good"): 4, v.ID("fine"): 3, v.ID("nice"): 3}
	syn.Set("good", []string{"fine", "grand", "nice", "superb"})
	for _, oov := range []bool{false, true} {
		for name, s := range searches() {
			a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: s, OOVAsUnk: oov}
			r, err := a.Run(tg, Example{Text: "the movie was good", Label: 1}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !oov {
				if r.Type != Failed {
					t.Fatalf("%s, vocabulary only: %+v", name, r)
				}
				continue
			}
			if r.Type != Successful || r.NumPerturbed != 1 || r.PerturbedText != "the movie was grand" {
				t.Fatalf("%s, OOV as UNK: %+v", name, r)
			}
		}
	}
}

// TestTextVictimReadsThePerturbedText: with Target.Encode, every candidate
// reaches the victim as the original text with the substitution written in
// (a deleted word as nothing, UNK as Target.UnkText), and any substitute has
// an id in the open vocabulary; the searches find what they find on ids.
func TestTextVictimReadsThePerturbedText(t *testing.T) {
	own := map[string]int32{"the": 1, "movie": 2, "was": 3, "truly": 4, "good": 5, "fine": 6, "[UNK]": 7}
	var mu sync.Mutex
	seen := map[string]bool{}
	encode := func(s string) []int32 {
		mu.Lock()
		seen[s] = true
		mu.Unlock()
		var ids []int32
		for _, w := range strings.Fields(s) {
			ids = append(ids, own[w]) // 0 for a word the victim does not know
		}
		return ids
	}
	m := &linear{w: map[int32]float64{own["good"]: 4, own["fine"]: 3}, bias: -2}
	textGrad := func(s string, _ int) []float64 {
		var g []float64
		for _, w := range strings.Fields(s) {
			g = append(g, math.Abs(m.w[own[w]]))
		}
		return g
	}
	tg := Target{Victim: m, Vocab: text.NewOpenVocab(), Tok: text.NewWhitespace(), Encode: encode, UnkText: "[UNK]", TextGrad: textGrad}
	syn := lexicon.NewNeighbors("test")
	syn.Set("good", []string{"fine", "grand"}) // "grand" is in no closed vocabulary
	syn.Set("truly", []string{"really"})
	for name, s := range searches() {
		if name == "hla" {
			continue // needs a sentence encoder
		}
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: s}
		r, err := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != Successful || r.PerturbedText != "the movie was truly grand" {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	for _, want := range []string{"the movie was truly good", "the movie was truly grand", "the movie was really good"} {
		if !seen[want] {
			t.Errorf("the victim never read %q", want)
		}
	}
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete}}
	if _, err := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0); err != nil {
		t.Fatal(err)
	}
	a.Search = Greedy{Order: ByUnk}
	if _, err := a.Run(tg, Example{Text: "the movie was truly good", Label: 1}, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the movie was  good", "the movie was truly ", "the movie was [UNK] good"} {
		if !seen[want] {
			t.Errorf("the victim never read %q", want)
		}
	}
}

// unchecked drops what RunAll adds after reading texts back (not in the CSV).
func unchecked(rs []Result) []Result {
	out := stripSeconds(rs)
	for i := range out {
		out[i].Check = Unchecked
	}
	return out
}

// TestResumeAfterRowCutBeforeItsNewline: a results file whose last row
// lost only its final newline (or the end of its last field) resumes by
// attacking that example again, not by gluing the next row onto it.
func TestResumeAfterRowCutBeforeItsNewline(t *testing.T) {
	tg, syn, ex := synthTask()
	ex = ex[:6]
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete}}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.csv")
	want, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: 1, Seed: 3, CSV: full})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 3} { // the newline; the newline and two bytes of the last field
		part := filepath.Join(dir, fmt.Sprintf("cut%d.csv", cut))
		if err := os.WriteFile(part, raw[:len(raw)-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		rows, _, err := ReadCSV(part)
		if err != nil || len(rows) != len(ex)-1 {
			t.Fatalf("cut %d: %d rows, %v; want the %d complete ones", cut, len(rows), err, len(ex)-1)
		}
		got, err := RunAll(context.Background(), a, tg, ex, RunOptions{Workers: 1, Seed: 3, CSV: part, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadCSV(part)
		if err != nil || !reflect.DeepEqual(unchecked(back), unchecked(want)) || !reflect.DeepEqual(stripSeconds(got), stripSeconds(want)) {
			t.Fatalf("cut %d: resumed file differs (%v)", cut, err)
		}
	}
}
