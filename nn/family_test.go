package nn

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// TestPredictFamiliesMatchesPredict: every base and every edit of a base
// (single swaps anywhere, edits across the whole text, repeated positions,
// swaps back to the base's own token, empty edits) scored in one family
// sweep equals a full forward pass, for every encoder configuration.
func TestPredictFamiliesMatchesPredict(t *testing.T) {
	for name, cfg := range incConfigs() {
		r := rand.New(rand.NewSource(11))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		randomizeGroupScales(m, r)
		inc := m.NewIncremental()
		for _, n := range []int{1, 2, 5, 9, 40} {
			bases := make([][]int32, 1+r.Intn(4))
			for b := range bases {
				bases[b] = make([]int32, n)
				for i := range bases[b] {
					bases[b][i] = int32(2 + r.Intn(cfg.VocabSize-2))
				}
			}
			var edits [][]Swap
			var of []int
			for k := 0; k < 30; k++ {
				b := r.Intn(len(bases))
				var ed []Swap
				switch {
				case k == 0: // empty
				case k == 1: // back to the base's own token
					p := r.Intn(n)
					ed = []Swap{{Pos: p, ID: bases[b][p]}}
				case k < 20:
					ed = []Swap{{Pos: r.Intn(n), ID: int32(r.Intn(cfg.VocabSize))}}
				default: // several, possibly repeated, positions
					for j := 0; j < 1+r.Intn(2*n); j++ {
						ed = append(ed, Swap{Pos: r.Intn(n), ID: int32(r.Intn(cfg.VocabSize))})
					}
				}
				edits, of = append(edits, ed), append(of, b)
			}
			gotB, gotE := inc.PredictFamilies(bases, of, edits)
			wantB := m.Predict(bases)
			for b := range bases {
				if d := tensor.MaxAbsDiff(gotB[b], wantB[b]); d > 1e-5 {
					t.Errorf("%s n=%d base %d: differs from Predict by %g", name, n, b, d)
				}
			}
			seqs := make([][]int32, len(edits))
			for e, ed := range edits {
				seqs[e] = ApplySwaps(bases[of[e]], ed)
			}
			wantE := m.Predict(seqs)
			for e := range edits {
				if d := tensor.MaxAbsDiff(gotE[e], wantE[e]); d > 1e-5 {
					t.Errorf("%s n=%d edit %v of base %d: differs from Predict by %g", name, n, edits[e], of[e], d)
				}
			}
		}
		if inc.Base() != nil {
			t.Errorf("%s: PredictFamilies set the Incremental's own base", name)
		}
	}
}

// BenchmarkPredictFamilies scores a GA perturbation step on a BiLSTM: 60
// children that each differ from the original text in k scattered
// positions, and 8 one-word substitutes of each, by the shared-base path
// (the base at the children's majority, the original) and by the family
// sweep.
func BenchmarkPredictFamilies(b *testing.B) {
	m := benchModel(b, "bilstm")
	const l, children, subs = 250, 60, 8
	orig, _, _ := benchSwaps(l)
	r := rand.New(rand.NewSource(5))
	for _, k := range []int{4, 16} {
		bases := make([][]int32, children)
		var edits [][]Swap
		var of []int
		var flat [][]Swap // the same queries as edits of the original
		for c := range bases {
			var own []Swap
			for j := 0; j < k; j++ {
				own = append(own, Swap{Pos: r.Intn(l), ID: int32(2 + r.Intn(14998))})
			}
			bases[c] = ApplySwaps(orig, own)
			flat = append(flat, own)
			p := r.Intn(l)
			for s := 0; s < subs; s++ {
				sw := Swap{Pos: p, ID: int32(2 + r.Intn(14998))}
				edits, of = append(edits, []Swap{sw}), append(of, c)
				flat = append(flat, append(append([]Swap(nil), own...), sw))
			}
		}
		b.Run(fmt.Sprintf("L%d/k%d/SharedBase", l, k), func(b *testing.B) {
			inc := m.NewIncremental()
			inc.SetBase(orig)
			for i := 0; i < b.N; i++ {
				inc.PredictEdits(flat)
			}
		})
		b.Run(fmt.Sprintf("L%d/k%d/Families", l, k), func(b *testing.B) {
			inc := m.NewIncremental()
			for i := 0; i < b.N; i++ {
				inc.PredictFamilies(bases, of, edits)
			}
		})
	}
}
