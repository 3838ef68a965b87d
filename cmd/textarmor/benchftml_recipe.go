package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/textarmor/textarmor/train"
)

// recordedRecipe reads the train arguments recorded in path (trained.json
// or started.json); nil when the file is absent.
func recordedRecipe(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var rec struct {
		Recipe []string `json:"recipe"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec.Recipe, nil
}

// rowRecipe is the recipe a row's trained.json records, else its
// started.json's; nil when neither exists.
func rowRecipe(rowDir string) ([]string, error) {
	for _, f := range []string{"trained.json", "started.json"} {
		if rec, err := recordedRecipe(filepath.Join(rowDir, f)); err != nil || rec != nil {
			return rec, err
		}
	}
	return nil, nil
}

// flagValue returns the value of --name in train arguments ("" if absent).
func flagValue(args []string, name string) string {
	v := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			v = args[i+1]
		}
	}
	return v
}

// tableRows are the rows a table shows, in the recipes' order, with the
// recipe each is shown with: the rows this run asks for, and those another
// run trains or trained into the same folder, with the recipe that run
// recorded.
func (tb *ftmlTable) tableRows(defs []string, recipes map[string]tableRecipe) ([]string, map[string]tableRecipe, error) {
	var rows []string
	shown := map[string]tableRecipe{}
	for _, order := range ftmlRecipes() {
		d := order.Defense
		if slices.Contains(defs, d) {
			rows, shown[d] = append(rows, d), recipes[d]
			continue
		}
		rec, err := rowRecipe(filepath.Join(tb.out, d))
		if err != nil {
			return nil, nil, err
		}
		if rec == nil {
			continue
		}
		// Epochs other than this run's recipe (or its reference, when
		// --recipe-epochs changed it) are marked as such.
		ref := recipes[d].Epochs
		if recipes[d].Reference > 0 {
			ref = recipes[d].Reference
		}
		r := tableRecipe{Defense: d}
		r.Epochs, _ = strconv.Atoi(flagValue(rec, "--epochs"))
		if r.Epochs != ref {
			r.Reference = ref
		}
		r.Args = withoutFlags(rec, map[string]bool{"defense": true, "epochs": true, "synonyms": true})
		rows, shown[d] = append(rows, d), r
	}
	return rows, shown, nil
}

// sameRecipe checks that the recipe recorded in path (trained.json or
// started.json; absent is fine) trains r's epochs with r's values of the
// row's own flags.
func sameRecipe(path string, r tableRecipe, rowDir string) error {
	rec, err := recordedRecipe(path)
	if err != nil || rec == nil {
		return err
	}
	got := flagValue(rec, "--epochs")
	if want := fmt.Sprint(r.Epochs); got != want {
		return fmt.Errorf("%s: the model there trained for %s epochs, this run asks for %s; remove %s to retrain", path, got, want, rowDir)
	}
	// The row's own hyper-parameters (--recipe-flags) must match too,
	// defaults filled in, so that a variant never resumes the reference.
	had, err := recipeValues(rec)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	want, err := recipeValues(append([]string{"--defense", r.Defense}, r.Args...))
	if err != nil {
		return err
	}
	for name, v := range want {
		if rowFlag(r.Defense, name) && had[name] != v {
			return fmt.Errorf("%s: the model there trained with --%s %s, this run asks for %s; remove %s to retrain", path, name, had[name], v, rowDir)
		}
	}
	return nil
}

// checkRecipe checks a row's recipe as train will (the numeric flags that
// --recipe-flags may set included), before any row trains: a value out of
// range would otherwise fail only when its row's turn comes, hours in.
func checkRecipe(r tableRecipe) error {
	rp, err := parseRecipe(append([]string{"--defense", r.Defense, "--epochs", fmt.Sprint(r.Epochs)}, r.Args...))
	if err != nil {
		return usageError{fmt.Errorf("--recipe-flags: the %s row: %v", r.Defense, err)}
	}
	err = rp.dfl.check(rp.fs)
	if err == nil {
		err = checkNumbers(recipeRules(rp.opt)...)
	}
	if err == nil {
		_, err = parseDecayEpochs(rp.decay)
	}
	if err == nil {
		err = rp.nf.check()
	}
	if err != nil {
		return usageError{fmt.Errorf("--recipe-flags: the %s row: %v", r.Defense, err)}
	}
	return nil
}

// parsedRecipe is a row's recipe parsed with the train flags the table's
// recipes use.
type parsedRecipe struct {
	dfl   defenseFlags
	nf    netFlags
	opt   train.Options
	decay string
	// archArgs are the architecture flags the recipe sets, as
	// --NAME=VALUE.
	archArgs []string
	fs       *flag.FlagSet
}

func parseRecipe(args []string) (*parsedRecipe, error) {
	rp := &parsedRecipe{fs: flag.NewFlagSet("recipe", flag.ContinueOnError)}
	rp.fs.SetOutput(io.Discard)
	rp.dfl.register(rp.fs)
	rp.fs.IntVar(&rp.opt.Epochs, "epochs", 0, "")
	rp.fs.IntVar(&rp.opt.BatchSize, "batch", 64, "")
	rp.fs.Float64Var(&rp.opt.LR, "lr", 1e-3, "")
	rp.fs.StringVar(&rp.decay, "lr-decay-epochs", "", "")
	rp.fs.Float64Var(&rp.opt.Clip, "clip", 0, "")
	rp.fs.Float64Var(&rp.opt.WeightDecay, "weight-decay", 0, "")
	rp.nf.register(rp.fs)
	if err := rp.fs.Parse(args); err != nil {
		return nil, err
	}
	rp.fs.Visit(func(f *flag.Flag) {
		if slices.Contains(recipeArchFlags, f.Name) {
			rp.archArgs = append(rp.archArgs, "--"+f.Name+"="+f.Value.String())
		}
	})
	return rp, nil
}

// recipeValues is every recipe flag's value after parsing args (defaults
// for those absent).
func recipeValues(args []string) (map[string]string, error) {
	rp, err := parseRecipe(args)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	rp.fs.VisitAll(func(f *flag.Flag) { out[f.Name] = f.Value.String() })
	return out, nil
}
