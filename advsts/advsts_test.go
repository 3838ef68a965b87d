package advsts

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

var words = strings.Fields("the a film movie plot story good great fine bad awful poor long short dull funny")

// encoder is a random 2-layer transformer over the words, mean pooling,
// scaled up so that one swapped word moves the embedding visibly.
func encoder(t *testing.T) *model.Model {
	t.Helper()
	wp, err := text.NewWordPiece(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, words...), text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig("transformer")
	tc := *cfg.Transformer
	tc.Layers, tc.Intermediate, tc.MaxPositions, tc.Pool = 2, 32, 32, "mean"
	cfg.Transformer, cfg.EmbedDim = &tc, 16
	opts := wp.Options()
	m, err := model.NewTransformer(model.Meta{Net: cfg, Tokenizer: "whitespace", MaxLen: 32, Pieces: &opts}, wp, rand.New(rand.NewSource(4)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Net.Emb.W.Value.Data {
		m.Net.Emb.W.Value.Data[i] *= 50
	}
	return m
}

func score(t *testing.T, m *model.Model, a, b string) float64 {
	e, err := m.Embed([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	return 5 * math.Max(0, tensor.Cosine(e[0], e[1]))
}

func TestRun(t *testing.T) {
	m := encoder(t)
	syn := lexicon.NewNeighbors("test")
	for _, g := range [][]string{{"good", "great", "fine"}, {"bad", "awful", "poor"}, {"film", "movie"}, {"plot", "story"}, {"long", "dull"}} {
		for _, w := range g {
			var others []string
			for _, u := range g {
				if u != w {
					others = append(others, u)
				}
			}
			syn.Set(w, others)
		}
	}
	texts := [][2]string{{"a good film", "the great movie"}, {"the bad plot", "a poor story"}, {"a long dull film", "the short funny movie"},
		{"good story", "bad plot"}, {"the fine movie", "a great film"}, {"the awful plot", "a good film"}}
	var pairs []dataset.SimPair
	for i, x := range texts {
		gold := score(t, m, x[0], x[1]) // the encoder is right on every pair ...
		if i == 5 {
			gold = math.Mod(gold+2.5, 5) // ... but this one, which is skipped
		}
		pairs = append(pairs, dataset.SimPair{A: x[0], B: x[1], Score: gold})
	}
	a := &attack.Attack{Goal: attack.Untargeted{}, Transformation: attack.WordSwap{Source: syn}, Search: attack.Greedy{Order: attack.ByDelete}}
	cfg := DefaultConfig()
	cfg.Margin, cfg.Workers = 0.05, 1
	rep, err := Run(context.Background(), a, m, pairs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 6 || rep.Skipped != 1 || rep.Pairs[5].Type != attack.Skipped || rep.Successful == 0 {
		t.Fatalf("n %d skipped %d successful %d failed %d: %+v", rep.N, rep.Skipped, rep.Successful, rep.Fail, rep.Pairs)
	}
	for _, r := range rep.Pairs {
		p := pairs[r.Index]
		switch r.Type {
		case attack.Successful:
			// Recomputed independently: the rewrite moved the score by the margin.
			got := score(t, m, r.Perturbed, p.B)
			if math.Abs(got-r.Adversarial) > 1e-4 || math.Abs(got-p.Score) < math.Abs(r.Clean-p.Score)+cfg.Margin-1e-4 {
				t.Errorf("pair %d: %q → %q scores %.4f (reported %.4f), clean %.4f, gold %.4f", r.Index, r.Original, r.Perturbed, got, r.Adversarial, r.Clean, p.Score)
			}
			if r.Perturbed == r.Original || len(strings.Fields(r.Perturbed)) != len(strings.Fields(r.Original)) {
				t.Errorf("pair %d: %q → %q", r.Index, r.Original, r.Perturbed)
			}
		default:
			if r.Perturbed != r.Original || r.Adversarial != r.Clean {
				t.Errorf("pair %d (%s) changed the attacked set", r.Index, r.Type)
			}
		}
	}
	if want := 100 * float64(rep.Successful) / float64(rep.Successful+rep.Fail); rep.ASR != want {
		t.Errorf("ASR %g, want %g", rep.ASR, want)
	}
	cfg.Workers = 3
	again, err := Run(context.Background(), a, m, pairs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Pairs, rep.Pairs) {
		t.Error("results depend on the number of workers")
	}
	cfg.Margin = 0
	if _, err := Run(context.Background(), a, m, pairs, cfg); err == nil {
		t.Error("margin 0 accepted")
	}
}
