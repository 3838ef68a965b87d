package nn

import (
	"math/rand"
	"slices"
	"testing"
)

// PredictPlan covers every sequence once, in blocks of PredictBatch sorted
// by length, and running its blocks one shard at a time (PredictOn) gives
// Predict's probabilities bit for bit: what sharded evaluation relies on.
func TestPredictPlanShards(t *testing.T) {
	cfg := incConfigs()["cnn/max/tanh=false"]
	r := rand.New(rand.NewSource(3))
	m, err := New(cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	seqs := make([][]int32, 2*PredictBatch+37)
	for i := range seqs {
		seqs[i] = make([]int32, 1+r.Intn(30))
		for j := range seqs[i] {
			seqs[i][j] = int32(2 + r.Intn(cfg.VocabSize-2))
		}
	}
	plan := PredictPlan(seqs)
	if len(plan) != 3 || len(plan[2]) != 37 {
		t.Fatalf("plan of %d blocks, last %d", len(plan), len(plan[len(plan)-1]))
	}
	var all []int
	prev := 0
	for _, b := range plan {
		for _, i := range b {
			if len(seqs[i]) < prev {
				t.Fatalf("block order not by length at %d", i)
			}
			prev = len(seqs[i])
		}
		all = append(all, b...)
	}
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("plan covers %d at position %d", v, i)
		}
	}
	want := m.Predict(seqs)
	got := make([][]float32, len(seqs))
	for shard := 0; shard < 2; shard++ {
		var mine [][]int
		for b := shard; b < len(plan); b += 2 {
			mine = append(mine, plan[b])
		}
		for i, p := range m.PredictOn(seqs, mine) {
			if p != nil {
				if got[i] != nil {
					t.Fatalf("text %d scored by two shards", i)
				}
				got[i] = p
			}
		}
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("text %d: sharded %v, single %v", i, got[i], want[i])
		}
	}
}
