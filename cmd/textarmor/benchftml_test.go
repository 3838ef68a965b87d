package main

import (
	"flag"
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/experiments"
	"github.com/textarmor/textarmor/pipeline"
)

// --recipe-flags sets a row's own flags on its training configuration and
// rejects anything else.
func TestTableRecipeFlags(t *testing.T) {
	specs := []string{"ibp=--ibp-hull=projected --ibp-kappa=0.5", "ibp=--input-layer=100 --head-hidden=100 --hidden=100 --clip=0.25 --weight-decay=1e-4"}
	recipes, err := tableRecipes(experiments.FTMLRecipes(), false, "", specs)
	if err != nil {
		t.Fatal(err)
	}
	ibp := recipes["ibp"]
	c := pipeline.NewTrainConfig()
	if err := ibp.Tune(&c); err != nil {
		t.Fatal(err)
	}
	s, n, o := c.Defense.Settings, c.Net, c.Options
	if s.IBPHull != defense.HullProjected || s.IBPKappa != 0.5 || n.InputLayer != 100 || n.HeadHidden != 100 || n.Hidden != 100 ||
		o.Clip != 0.25 || o.WeightDecay != 1e-4 {
		t.Errorf("the ibp row's configuration after its recipe flags: %+v %+v clip %g, weight decay %g", s, n, o.Clip, o.WeightDecay)
	}
	// Only the flags given change: the rest keeps the row's values.
	c = pipeline.NewTrainConfig()
	c.Net.Filters, c.Options.LR = 7, 0.5
	if err := ibp.Tune(&c); err != nil || c.Net.Filters != 7 || c.Options.LR != 0.5 || c.Defense.Settings.IBPEps != pipeline.NewDefenseConfig().Settings.IBPEps {
		t.Errorf("recipe flags changed settings they do not name: filters %d, lr %g, eps %g (%v)", c.Net.Filters, c.Options.LR, c.Defense.Settings.IBPEps, err)
	}
	if ibp.Tuned != "--ibp-hull=projected --ibp-kappa=0.5 --input-layer=100 --head-hidden=100 --hidden=100 --clip=0.25 --weight-decay=1e-4" {
		t.Errorf("the table shows the ibp row as %q", ibp.Describe())
	}
	if _, err := tableRecipes(experiments.FTMLRecipes(), false, "", nil); err != nil || recipes["sem"].Tune != nil {
		t.Errorf("the reference recipes were modified (%v)", err)
	}
	for _, bad := range [][]string{{"ibp"}, {"ibp="}, {"ibp=--ascc-steps=3"}, {"ibp=--model=cnn"}, {"ibp=--embed-dim=50"}, {"ibp=--lr=1"},
		{"ibp=--ibp-hull"}, {"xyz=--xyz-a=1"}, {"ibp=--ibp-ramp-epochs=3"}, {"ibp=--epochs=3"}, {"ibp=--ibp-eps=1 --ibp-eps=0.5"},
		{"ibp=--ibp-hull=projected", "ibp=--ibp-hull=embedding"}, {"ibp=--ibp-hull=convex"}, {"ibp=--hidden=x"}} {
		if _, err := tableRecipes(experiments.FTMLRecipes(), false, "", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Every flag a table may set on its rows is a train flag and names fields
// of the training configuration.
func TestOverlayFieldsExist(t *testing.T) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	var tf trainFlags
	tf.register(fs)
	for name, paths := range overlayFields {
		if fs.Lookup(name) == nil {
			t.Errorf("--%s is not a train flag", name)
		}
		for _, path := range paths {
			v := reflect.ValueOf(pipeline.NewTrainConfig())
			for _, f := range strings.Split(path, ".") {
				if v = v.FieldByName(f); !v.IsValid() {
					t.Errorf("--%s: pipeline.TrainConfig has no %s", name, path)
					break
				}
			}
		}
	}
}
