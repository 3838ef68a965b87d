package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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
	// Architecture flags, for Jia et al.'s IBP model.
	if err := addRecipeFlags(recipes, []string{"ibp=--input-layer=100 --head-hidden=100 --hidden=100 --clip=0.25 --weight-decay=1e-4"}); err != nil {
		t.Fatal(err)
	}
	if got := recipes["ibp"].Args; !slices.Contains(got, "--input-layer=100") || !slices.Contains(got, "--hidden=100") {
		t.Errorf("ibp recipe %v", got)
	}
	for _, bad := range []string{"ibp", "ibp=", "ibp=--ascc-steps=3", "ibp=--model=cnn", "ibp=--embed-dim=50", "ibp=--lr=1", "ibp=--hidden=50", "ibp=--ibp-hull", "xyz=--xyz-a=1", "ibp=--ibp-ramp-epochs=3", "ibp=--epochs=3",
		"ibp=--ibp-hull=embedding", "ibp=--ibp-eps=1 --ibp-eps=0.5"} { // the last two: set by the first call; twice in one spec
		if err := addRecipeFlags(recipes, []string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A row trained with other own hyper-parameters (defaults filled in) is
// not resumed or reused by a run that asks for a variant, nor the reverse.
func TestSameRecipeComparesOwnFlags(t *testing.T) {
	dir := t.TempDir()
	ref := ftmlRecipes()[5] // ibp
	variant := map[string]tableRecipe{"ibp": ftmlRecipes()[5]}
	if err := addRecipeFlags(variant, []string{"ibp=--ibp-hull=projected"}); err != nil {
		t.Fatal(err)
	}
	record := func(r tableRecipe) string {
		path := filepath.Join(dir, "started.json")
		args := append([]string{"--defense", "ibp", "--epochs", fmt.Sprint(r.Epochs)}, r.Args...)
		if err := writeJSON(path, map[string]any{"recipe": append(args, "--synonyms", "x.json")}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := sameRecipe(record(ref), ref, dir); err != nil {
		t.Errorf("reference against itself: %v", err)
	}
	explicit := ref
	explicit.Args = append(slices.Clone(ref.Args), "--ibp-hull", "embedding")
	if err := sameRecipe(record(ref), explicit, dir); err != nil {
		t.Errorf("the default spelled out: %v", err)
	}
	if err := sameRecipe(record(ref), variant["ibp"], dir); err == nil || !strings.Contains(err.Error(), "--ibp-hull embedding") {
		t.Errorf("reference row, variant run: %v", err)
	}
	if err := sameRecipe(record(variant["ibp"]), ref, dir); err == nil {
		t.Error("variant row, reference run: no error")
	}
	// So do the row's architecture flags.
	layered := map[string]tableRecipe{"ibp": ftmlRecipes()[5]}
	if err := addRecipeFlags(layered, []string{"ibp=--input-layer=100"}); err != nil {
		t.Fatal(err)
	}
	if err := sameRecipe(record(ref), layered["ibp"], dir); err == nil || !strings.Contains(err.Error(), "--input-layer 0") {
		t.Errorf("reference row, layered run: %v", err)
	}
	if err := sameRecipe(record(layered["ibp"]), layered["ibp"], dir); err != nil {
		t.Errorf("layered against itself: %v", err)
	}
	clipped := map[string]tableRecipe{"ibp": layered["ibp"]}
	if err := addRecipeFlags(clipped, []string{"ibp=--clip=0.25"}); err != nil {
		t.Fatal(err)
	}
	if err := sameRecipe(record(layered["ibp"]), clipped["ibp"], dir); err == nil || !strings.Contains(err.Error(), "--clip 0") {
		t.Errorf("unclipped row, clipped run: %v", err)
	}
}
