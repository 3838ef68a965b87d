package main

import (
	"slices"
	"testing"
)

// --recipe-flags appends a row's own flags to its recipe and rejects
// anything else.
func TestAddRecipeFlags(t *testing.T) {
	recipes := map[string]tableRecipe{}
	for _, r := range ftmlRecipes() {
		recipes[r.Defense] = r
	}
	if err := addRecipeFlags(recipes, []string{"ibp=--ibp-hull=projected --ibp-kappa=0.5"}); err != nil {
		t.Fatal(err)
	}
	got := recipes["ibp"].Args
	if n := len(got); n < 2 || got[n-2] != "--ibp-hull=projected" || got[n-1] != "--ibp-kappa=0.5" {
		t.Errorf("ibp recipe %v", got)
	}
	if slices.Contains(ftmlRecipes()[5].Args, "--ibp-hull=projected") {
		t.Error("the reference recipe was modified")
	}
	for _, bad := range []string{"ibp", "ibp=", "ibp=--ascc-steps=3", "ibp=--ibp-hull", "xyz=--xyz-a=1", "ibp=--ibp-ramp-epochs=3", "ibp=--epochs=3"} {
		if err := addRecipeFlags(recipes, []string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
