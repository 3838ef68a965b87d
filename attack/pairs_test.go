package attack

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// overlap is a pair victim: class 1 ("paraphrase") when a word of the
// second text (after the separator id) is also in the first. It records
// every sequence it scores.
type overlap struct {
	sep  int32
	mu   sync.Mutex
	seen [][]int32
}

func (v *overlap) Predict(seqs [][]int32) [][]float32 {
	v.mu.Lock()
	v.seen = append(v.seen, seqs...)
	v.mu.Unlock()
	out := make([][]float32, len(seqs))
	for k, s := range seqs {
		out[k] = []float32{0.9, 0.1}
		i := slices.Index(s, v.sep)
		if i < 0 {
			continue
		}
		for _, id := range s[i+1:] {
			if slices.Contains(s[:i], id) {
				out[k] = []float32{0.1, 0.9}
			}
		}
	}
	return out
}

// pairTarget reads a pair as the first text's word ids, the separator,
// the second text's ids.
func pairTarget() (Target, *lexicon.Neighbors, *overlap) {
	vocab, _ := text.NewVocab([]string{text.PadWord, text.UnkWord, "|", "the", "a", "cat", "kitty", "dog", "sat", "ran", "sprinted"})
	v := &overlap{sep: vocab.ID("|")}
	tok := text.NewWhitespace()
	enc := func(s string) []int32 { return vocab.Encode(text.Texts(tok.Tokenize(s)), 0) }
	syn := lexicon.NewNeighbors("test")
	syn.Set("cat", []string{"kitty"})
	syn.Set("sat", []string{"ran"})
	syn.Set("ran", []string{"sprinted"})
	t := Target{Victim: v, Vocab: vocab, Tok: tok, Encode: enc, UnkText: text.UnkWord,
		TextGrad: func(s string, _ int) []float64 { return make([]float64, len(tok.Tokenize(s))) },
		EncodePair: func(a, b string) []int32 {
			return append(append(enc(a), v.sep), enc(b)...)
		},
		TextGradPair: func(a, b string, _ int) []float64 {
			first := text.Texts(tok.Tokenize(a))
			var g []float64
			for _, w := range text.Texts(tok.Tokenize(b)) {
				if slices.Contains(first, w) {
					g = append(g, 1)
				} else {
					g = append(g, 0)
				}
			}
			return g
		}}
	return t, syn, v
}

// An attack on a pair changes the second text only, while the victim
// reads every candidate with the fixed first text; the written pair is
// read back, also for rows resumed from the CSV, whose text columns hold
// the attacked (second) text.
func TestAttackPairChangesSecondTextOnly(t *testing.T) {
	for _, search := range []Search{Greedy{Order: ByDelete}, Greedy{Order: ByPWWS}, Greedy{Order: ByGradient}, Beam{Width: 4},
		Genetic{PopSize: 20, Generations: 10, Temp: 0.3, MaxSynonyms: 5}} {
		tg, syn, v := pairTarget()
		a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: search}
		ex := Example{Index: 3, Fixed: "the cat sat", Text: "a cat ran", Label: 1}
		r, err := a.Run(tg, ex, 1)
		if err != nil {
			t.Fatal(err)
		}
		name := search.Name()
		if r.Type != Successful || r.OriginalText != "a cat ran" || r.PerturbedText != "a kitty ran" || r.Fixed != "the cat sat" || r.NumWords != 3 {
			t.Fatalf("%s: %+v", name, r)
		}
		first := tg.EncodePair("the cat sat", "")
		for _, s := range v.seen {
			if !slices.Equal(s[:len(first)], first) {
				t.Fatalf("%s: the victim read %v, not the fixed first text %v", name, s, first)
			}
		}
	}

	// The same second text with another first text is another example: the
	// victim reads the pair, so it is misclassified before the attack.
	tg, syn, _ := pairTarget()
	a := &Attack{Goal: Untargeted{}, Transformation: WordSwap{syn}, Search: Greedy{Order: ByDelete}}
	if r, _ := a.Run(tg, Example{Fixed: "the dog sat", Text: "a cat ran", Label: 1}, 1); r.Type != Skipped {
		t.Errorf("pair without overlap: %+v", r)
	}

	out := filepath.Join(t.TempDir(), "pairs.csv")
	items := []Example{{Index: 0, Fixed: "the cat sat", Text: "a cat ran", Label: 1}, {Index: 1, Fixed: "the dog sat", Text: "a kitty sat", Label: 1}}
	rs, err := RunAll(context.Background(), a, tg, items, RunOptions{CSV: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Check != Verified || rs[0].Fixed != "the cat sat" || rs[1].Type != Successful || rs[1].PerturbedText != "a kitty ran" {
		t.Fatalf("results %+v", rs)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows[0], Columns) || rows[1][0] != "a cat ran" || rows[1][1] != "a kitty ran" {
		t.Errorf("CSV %q", rows)
	}
	again, err := RunAll(context.Background(), a, tg, items, RunOptions{CSV: out, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range again {
		if r.Fixed != items[k].Fixed || r.Check != Verified {
			t.Errorf("resumed row %+v", r)
		}
	}
	if s := again[1].Show(nil, false); !strings.Contains(s, "\n  the dog sat\n- a kitty [[sat]]\n+ a kitty [[ran]]\n") {
		t.Errorf("show:\n%s", s)
	}

	// A victim that does not read pairs is refused.
	tg.EncodePair = nil
	if _, err := a.Run(tg, items[0], 1); err == nil || !strings.Contains(err.Error(), "sentence pair") {
		t.Errorf("Run without EncodePair: %v", err)
	}
	if _, err := RunAll(context.Background(), a, tg, items, RunOptions{}); err == nil || !strings.Contains(err.Error(), "sentence pair") {
		t.Errorf("RunAll without EncodePair: %v", err)
	}
}
