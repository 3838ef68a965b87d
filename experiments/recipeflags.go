package experiments

import (
	"slices"
	"strings"
)

// RecipeArchFlags are the `train` architecture flags a row's recipe may
// set (--recipe-flags), e.g. Jia et al.'s IBP model for the IBP row (spec
// A16); the others come from the table's --model. RecipeTrainFlags are
// the optimiser flags no reference recipe sets (Jia et al. clip the
// gradient norm at 0.25 and decay weights by 1e-4; a short FTML run on a
// transformer raises its embedding table's rate).
var (
	RecipeArchFlags  = []string{"hidden", "pool", "dropout", "input-layer", "head-hidden", "filters", "widths"}
	RecipeTrainFlags = []string{"clip", "weight-decay", "embed-lr-scale"}
)

// RecipeFlagAllowed reports whether flag NAME may appear in defense's recipe flags.
func RecipeFlagAllowed(defense, name string) bool {
	return strings.HasPrefix(name, defense+"-") || slices.Contains(RecipeArchFlags, name) || slices.Contains(RecipeTrainFlags, name)
}

// Sets reports whether the reference recipe sets the row flag name
// itself (--recipe-flags may not change it).
func (r FTMLRecipe) Sets(name string) bool {
	switch name {
	case "sem-k":
		return r.SEMK > 0
	case "atfl-steps":
		return r.ATFLSteps > 0
	case "ascc-steps":
		return r.ASCCSteps > 0
	case "ibp-ramp-epochs":
		return r.IBPRampEpochs > 0
	}
	return false
}
