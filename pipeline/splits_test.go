package pipeline

import (
	"fmt"
	"slices"
	"testing"

	"github.com/textarmor/textarmor/dataset"
)

// SubsetSeed fixes TrainSubset's examples whatever Options.Seed is, so
// instances trained with other seeds train on the same subset.
func TestSubsetSeedFixesTheSubset(t *testing.T) {
	ds := &dataset.Dataset{}
	for i := range 50 {
		ds.Train = append(ds.Train, dataset.Example{Text: fmt.Sprint(i)})
	}
	c := TrainConfig{TrainSubset: true, TrainN: 10}
	a, _ := c.splits(ds, 42)
	b, _ := c.splits(ds, 43)
	if slices.Equal(texts(a), texts(b)) {
		t.Fatal("seeds 42 and 43 drew the same subset: the test cannot tell")
	}
	fixed := int64(42)
	c.SubsetSeed = &fixed
	if got, _ := c.splits(ds, 43); !slices.Equal(texts(got), texts(a)) {
		t.Errorf("with SubsetSeed 42, seed 43 trains on %v, want seed 42's %v", texts(got), texts(a))
	}
}

func texts(ex []dataset.Example) []string {
	var out []string
	for _, e := range ex {
		out = append(out, e.Text)
	}
	return out
}
