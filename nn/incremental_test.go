package nn

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/tensor"
)

// incConfigs covers every encoder and pooling variant.
func incConfigs() map[string]Config {
	out := map[string]Config{}
	for _, arch := range Archs {
		for _, pool := range []string{"max", "mean", "last"} {
			for _, tanh := range []bool{false, true} {
				if (arch == "cnn" && (pool == "mean" || tanh)) || (pool == "last" && arch != "lstm") {
					continue
				}
				c := DefaultConfig(arch)
				c.VocabSize, c.EmbedDim, c.NumClasses = 30, 8, 3
				c.Filters, c.Hidden = 6, 7
				c.Pool, c.Tanh = pool, tanh
				out[fmt.Sprintf("%s/%s/tanh=%v", arch, pool, tanh)] = c
			}
		}
	}
	// SEM's id map, FLAT's word mask and the group mask change the encoder's
	// inputs.
	for _, arch := range []string{"cnn", "bilstm"} {
		c := out[arch+"/max/tanh=false"]
		c.Mask, c.MaskHidden = true, 5
		c.IDMap = make([]int32, c.VocabSize)
		for i := range c.IDMap {
			c.IDMap[i] = int32(i)
			if i >= 2 {
				c.IDMap[i] = int32(2 + (i-2)/3*3) // groups of three share an id
			}
		}
		out[arch+"/mask+idmap"] = c
		// The trivial group-mask baseline, alone and with the word mask
		// (TestIncrementalMatchesPredict moves its scales away from 1).
		g := out[arch+"/max/tanh=false"]
		g.Groups, g.NumGroups = testGroups(g.VocabSize, 4), 5
		out[arch+"/groups"] = g
		c.Groups, c.NumGroups = g.Groups, g.NumGroups
		out[arch+"/mask+idmap+groups"] = c
		// Jia et al.'s IBP layers: a per-word input layer and a hidden
		// head layer, also under the word mask (the CNN's masked per-word
		// path cannot take them).
		j := out[arch+"/max/tanh=false"]
		j.InputLayer, j.HeadHidden = 5, 8
		if arch == "bilstm" {
			j.Pool = "mean"
		}
		out[arch+"/input+hidden"] = j
		j.Mask, j.MaskHidden = true, 5
		out[arch+"/input+hidden+mask"] = j
	}
	return out
}

// TestIncrementalMatchesPredict: every swap and multi-position edit scored
// incrementally equals a full forward pass, at the start, middle and end of
// sequences, including ones shorter than the widest CNN window.
func TestIncrementalMatchesPredict(t *testing.T) {
	for name, cfg := range incConfigs() {
		r := rand.New(rand.NewSource(7))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		randomizeGroupScales(m, r)
		inc := m.NewIncremental()
		for _, n := range []int{1, 2, 3, 4, 5, 6, 9, 40} {
			base := make([]int32, n)
			for i := range base {
				base[i] = int32(2 + r.Intn(cfg.VocabSize-2))
			}
			inc.SetBase(base)
			if d := tensor.MaxAbsDiff(inc.BaseProbs(), m.Predict([][]int32{base})[0]); d > 1e-5 {
				t.Errorf("%s n=%d: base probabilities differ by %g", name, n, d)
			}
			// Single swaps at every position (start, middle, end), to every
			// kind of id: padding, unknown, a word, the base's own token.
			var swaps []Swap
			for p := 0; p < n; p++ {
				for _, id := range []int32{PadID, 1, int32(2 + r.Intn(cfg.VocabSize-2)), base[p]} {
					swaps = append(swaps, Swap{Pos: p, ID: id})
				}
			}
			// Multi-position edits, including repeated positions and none.
			edits := [][]Swap{nil}
			for _, s := range swaps {
				edits = append(edits, []Swap{s})
			}
			for k := 0; k < 40; k++ {
				var ed []Swap
				size := 1 + r.Intn(4)
				if k >= 30 { // edits reaching across the text (GA children)
					size = 1 + r.Intn(2*n)
				}
				for j := 0; j < size; j++ {
					ed = append(ed, Swap{Pos: r.Intn(n), ID: int32(r.Intn(cfg.VocabSize))})
				}
				edits = append(edits, ed)
			}
			got := inc.PredictEdits(edits)
			seqs := make([][]int32, len(edits))
			for i, ed := range edits {
				seqs[i] = ApplySwaps(base, ed)
			}
			want := m.Predict(seqs)
			for i := range edits {
				if d := tensor.MaxAbsDiff(got[i], want[i]); d > 1e-5 {
					t.Errorf("%s n=%d edit %v: differs from Predict by %g (%v vs %v)", name, n, edits[i], d, got[i], want[i])
				}
			}
			single := m.PredictSwaps(base, swaps)
			for i, s := range swaps {
				if d := tensor.MaxAbsDiff(single[i], want[i+1]); d > 1e-5 {
					t.Errorf("%s n=%d swap %v: PredictSwaps differs by %g", name, n, s, d)
				}
			}
		}
	}
}

func TestDiff(t *testing.T) {
	base := []int32{1, 2, 3, 4}
	if s, ok := Diff(base, []int32{1, 9, 3, 8}, 2); !ok || len(s) != 2 || s[0] != (Swap{1, 9}) || s[1] != (Swap{3, 8}) {
		t.Errorf("Diff = %v, %v", s, ok)
	}
	if _, ok := Diff(base, []int32{1, 9, 3, 8}, 1); ok {
		t.Error("Diff ignored its limit")
	}
	if _, ok := Diff(base, []int32{1, 2, 3}, 4); ok {
		t.Error("Diff accepted a different length")
	}
}

// TestPredictDeletionsMatchesPredict: deleting any one token, scored
// incrementally, equals a full forward pass of the shorter text, for every
// encoder configuration and for texts at and around the widest window.
func TestPredictDeletionsMatchesPredict(t *testing.T) {
	for name, cfg := range incConfigs() {
		r := rand.New(rand.NewSource(8))
		m, err := New(cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		randomizeGroupScales(m, r)
		inc := m.NewIncremental()
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 9, 40} {
			base := make([]int32, n)
			for i := range base {
				base[i] = int32(2 + r.Intn(cfg.VocabSize-2))
			}
			if n > 6 {
				base[3] = base[2] // a run of equal tokens
			}
			inc.SetBase(base)
			// No incremental path for a transformer or the final-state
			// pooling: every query is a full pass.
			_, isTransformer := m.Enc.(*Transformer)
			full := isTransformer || cfg.Pool == "last"
			if fast := inc.FastDeletions(); fast != (!full && n-1 >= max(m.Enc.MinLen(), 1)) {
				t.Errorf("%s n=%d: FastDeletions %v", name, n, fast)
			}
			var pos []int
			var seqs [][]int32
			for p := 0; p < n; p++ {
				pos = append(pos, p)
				seqs = append(seqs, append(append([]int32(nil), base[:p]...), base[p+1:]...))
			}
			got := inc.PredictDeletions(pos)
			want := m.Predict(seqs)
			for i := range pos {
				if d := tensor.MaxAbsDiff(got[i], want[i]); d > 1e-5 {
					t.Errorf("%s n=%d deleting %d: differs from Predict by %g (%v vs %v)", name, n, pos[i], d, got[i], want[i])
				}
			}
		}
	}
}

func TestDeletion(t *testing.T) {
	base := []int32{5, 6, 6, 7}
	for _, c := range []struct {
		seq []int32
		pos int
		ok  bool
	}{
		{[]int32{6, 6, 7}, 0, true},
		{[]int32{5, 6, 7}, 1, true}, // either 6 may go: the first is reported
		{[]int32{5, 6, 6}, 3, true},
		{[]int32{5, 6, 8}, 0, false},
		{[]int32{5, 6, 6, 7}, 0, false},
		{[]int32{6, 7}, 0, false},
	} {
		pos, ok := Deletion(base, c.seq)
		if ok != c.ok || (ok && pos != c.pos) {
			t.Errorf("Deletion(%v, %v) = %d, %v; want %d, %v", base, c.seq, pos, ok, c.pos, c.ok)
		}
	}
}
