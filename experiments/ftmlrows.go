package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"github.com/textarmor/textarmor/defense"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
)

// rowRecipeRecord is what ROW/started.json (training begun) and
// ROW/trained.json (model finished) record about a row's model: the
// training configuration that decides its weights, and how the table
// shows it.
type rowRecipeRecord struct {
	Identity map[string]any `json:"identity"`
	Epochs   int            `json:"epochs"`
	Recipe   string         `json:"recipe"`
	TrainN   int            `json:"train_n,omitempty"`
	// Legacy is the train arguments records of earlier versions held
	// (then under "recipe", now a description): such a row is refused.
	Legacy []string `json:"-"`
}

func (rec *rowRecipeRecord) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if r, ok := raw["recipe"]; ok && len(r) > 0 && r[0] == '[' {
		return json.Unmarshal(r, &rec.Legacy)
	}
	type plain rowRecipeRecord
	return json.Unmarshal(b, (*plain)(rec))
}

// identity is the part of a row's training configuration that decides its
// weights, as JSON values (paths and output settings left out), so that a
// record compares with a configuration whatever wrote it.
func identity(tc pipeline.TrainConfig) (map[string]any, error) {
	o := tc.Options
	own, err := ownSettings(tc.Defense.Name, tc.Defense.Settings)
	if err != nil {
		return nil, err
	}
	v := map[string]any{
		"defense": tc.Defense.Name, "settings": own, "ibp_ramp_epochs": tc.Defense.IBPRampEpochs,
		"epochs": o.Epochs, "batch": o.BatchSize, "lr": o.LR, "lr_decay_epochs": o.DecayEpochs, "lr_decay": o.DecayGamma,
		"optimizer": o.Optimizer, "clip": o.Clip, "weight_decay": o.WeightDecay, "seed": o.Seed,
		"net": tc.Net, "embeddings": baseName(tc.Embeddings), "train_n": tc.TrainN, "init_lm": tc.InitLM != "",
	}
	if tc.EmbedLRScale > 0 && tc.EmbedLRScale != 1 { // only when set: older records stay comparable
		v["embed_lr_scale"] = tc.EmbedLRScale
	}
	if tc.SubsetSeed != nil { // instances of other seeds keep the first one's training subset
		v["subset_seed"] = *tc.SubsetSeed
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

// differs names the first setting (in key order) in which a record's
// identity differs from want's, ignoring the keys in skip; "" when none.
func differs(had, want map[string]any, skip ...string) string {
	keys := make([]string, 0, len(want))
	for k := range want {
		if k != "epochs" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	keys = append([]string{"epochs"}, keys...) // the usual difference, named first
outer:
	for _, k := range keys {
		for _, s := range skip {
			if k == s {
				continue outer
			}
		}
		h, w := had[k], want[k]
		if k == "settings" { // records written before ownSettings hold every defense's
			h, w = projectSettings(h, want["defense"]), projectSettings(w, want["defense"])
		}
		if !sameSetting(h, w) {
			if k == "epochs" {
				return fmt.Sprintf("the model there trained for %v epochs, this run asks for %v", had[k], want[k])
			}
			return fmt.Sprintf("the model there trained with %s %s, this run asks for %s", k, jsonText(had[k]), jsonText(want[k]))
		}
	}
	return ""
}

// ownSettings is the part of s the defense reads (defense.SettingsFields),
// so that a setting of another defense, or one added later, does not make
// a finished row look different.
func ownSettings(name string, s defense.Settings) (any, error) {
	all, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(all, &m); err != nil {
		return nil, err
	}
	return projectSettings(m, name), nil
}

// projectSettings keeps the fields of a recorded settings object that the
// defense named by name reads.
func projectSettings(v any, name any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	d, _ := name.(string)
	out := map[string]any{}
	for _, f := range defense.SettingsFields(d) {
		if x, ok := m[f]; ok {
			out[f] = x
		}
	}
	return out
}

// sameSetting compares recorded values: objects key by key, a key one side
// lacks matching a zero value on the other (a setting added later, off by
// default, changes nothing).
func sameSetting(a, b any) bool {
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if !okA || !okB {
		return reflect.DeepEqual(a, b)
	}
	for k, x := range ma {
		y, ok := mb[k]
		if !ok {
			if !zeroJSON(x) {
				return false
			}
			continue
		}
		if !sameSetting(x, y) {
			return false
		}
	}
	for k, y := range mb {
		if _, ok := ma[k]; !ok && !zeroJSON(y) {
			return false
		}
	}
	return true
}

// zeroJSON reports whether a decoded JSON value is a zero value.
func zeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, y := range x {
			if !zeroJSON(y) {
				return false
			}
		}
		return true
	}
	return false
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// readRecord reads ROW/name (started.json or trained.json); nil when absent.
func (r *ftmlRun) readRecord(row, name string) (*rowRecipeRecord, error) {
	var rec rowRecipeRecord
	ok, err := r.t.ReadJSON(row, name, &rec)
	if err != nil || !ok {
		return nil, err
	}
	if rec.Legacy != nil {
		return nil, fmt.Errorf("%s: recorded by an earlier textarmor as train arguments; remove %s to retrain the row", r.t.Path(row, name), r.t.RowDir(row))
	}
	return &rec, nil
}

// rowRecord is the record a row's trained.json holds, else its
// started.json's; nil when neither exists.
func (r *ftmlRun) rowRecord(row string) (*rowRecipeRecord, error) {
	for _, f := range []string{"trained.json", "started.json"} {
		if rec, err := r.readRecord(row, f); err != nil || rec != nil {
			return rec, err
		}
	}
	return nil, nil
}

// trainRow trains one row's model, or loads it when a finished one with
// the same configuration is there (a half-trained run resumes from its
// checkpoint; one of other settings is refused).
func (r *ftmlRun) trainRow(ctx context.Context, rc FTMLRecipe) (*model.Model, error) {
	row := rc.Defense
	tc, err := r.trainConfig(rc, r.ds, &r.preset)
	if err != nil {
		return nil, err
	}
	// No dev set: the last epoch is kept (spec §14 A13); a finished model
	// without its trained.json (a run killed in between) is retrained.
	tc.TrainSubset, tc.TrainN, tc.NoDev, tc.NoTest, tc.Retrain, tc.Log = true, r.TrainN, true, true, true, r.Log
	if r.seed != 0 {
		// Another instance: another initialisation and order, the same
		// training subset.
		subset := tc.Options.Seed
		tc.Options.Seed += r.seed
		tc.SubsetSeed = &subset
	}
	want, err := identity(tc)
	if err != nil {
		return nil, err
	}
	if ft, o := tc.FineTune, tc.Options; ft.Init != "" { // Table 2's rows
		want["init"], want["max_len"], want["vocab_supplement"] = baseName(ft.Init), float64(tc.Data.MaxLen), float64(ft.VocabSupplement)
		want["schedule"], want["warmup"] = o.Schedule, o.Warmup
	}
	dir := r.t.Path(row, "model")
	if err := r.extendRow(rc, want, dir); err != nil {
		return nil, err
	}
	for _, name := range []string{"trained.json", "started.json"} {
		rec, err := r.readRecord(row, name)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		if d := differs(rec.Identity, want); d != "" {
			return nil, fmt.Errorf("%s: %s; remove %s to retrain", r.t.Path(row, name), d, r.t.RowDir(row))
		}
	}
	if fileExists(r.t.Path(row, "trained.json")) {
		r.t.logf("%s: model exists, skipping training", row)
		return model.Load(dir)
	}
	rec := rowRecipeRecord{Identity: want, Epochs: rc.Epochs, Recipe: rc.Describe(), TrainN: r.TrainN}
	if err := r.t.WriteJSON(row, "started.json", rec); err != nil {
		return nil, err
	}
	o := &tc.Options
	o.Out, o.Resume, o.Progress = dir, true, r.Log
	// A shortened row keeps its last checkpoint, so that a later run with
	// more epochs continues it instead of training again from scratch.
	o.KeepCheckpoint = rc.Reference > 0
	o.LogPath = r.t.Path(row, "train.log.jsonl")
	o.Info = map[string]any{"table_recipe": rec.Recipe}
	r.t.logf("training %s: %s, %d epochs (last epoch kept, spec A13)", row, rec.Recipe, rc.Epochs)
	rep, err := pipeline.Train(ctx, tc)
	if err != nil {
		return nil, err
	}
	rec.TrainN = len(r.ds.Train)
	if r.TrainN > 0 && r.TrainN < rec.TrainN {
		rec.TrainN = r.TrainN
	}
	if err := r.t.WriteJSON(row, "trained.json", rec); err != nil {
		return nil, err
	}
	return rep.Model, nil
}

// extendRow prepares a row trained (or being trained) for fewer epochs
// than rc, with otherwise the same configuration and a kept checkpoint, to
// be continued to rc's epochs: the shorter model's cells and record move
// to ROW/epochs-N, and started.json records the longer recipe. Rows of
// other settings, or without a checkpoint, are left for trainRow to refuse.
func (r *ftmlRun) extendRow(rc FTMLRecipe, want map[string]any, modelDir string) error {
	row := rc.Defense
	rec, err := r.rowRecord(row)
	if err != nil || rec == nil || rec.Epochs >= rc.Epochs || differs(rec.Identity, want, "epochs") != "" {
		return err
	}
	if !fileExists(modelDir + ".ckpt") {
		return nil
	}
	rowDir := r.t.RowDir(row)
	archive := filepath.Join(rowDir, fmt.Sprintf("epochs-%d", rec.Epochs))
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(rowDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "started.json" || name == "train.log.jsonl" || (filepath.Ext(name) != ".json" && filepath.Ext(name) != ".csv") {
			continue
		}
		if err := os.Rename(filepath.Join(rowDir, name), filepath.Join(archive, name)); err != nil {
			return err
		}
	}
	r.t.logf("%s: extending the %d-epoch model to %d epochs from its kept checkpoint; its cells move to %s", row, rec.Epochs, rc.Epochs, archive)
	next := rowRecipeRecord{Identity: want, Epochs: rc.Epochs, Recipe: rc.Describe(), TrainN: r.TrainN}
	return r.t.WriteJSON(row, "started.json", next)
}

// shownRows are the rows the table shows, in the recipes' order, with the
// recipe each is shown with: the rows this run asks for, and those another
// run trains or trained into the same folder, with what that run recorded.
func (r *ftmlRun) shownRows() ([]string, map[string]shownRecipe, error) {
	var rows []string
	shown := map[string]shownRecipe{}
	for _, order := range r.archRecipes() {
		d := order.Defense
		rc := r.recipes[d]
		if contains(r.Defenses, d) {
			rows, shown[d] = append(rows, d), shownRecipe{rc.Epochs, rc.Reference, rc.Describe()}
			continue
		}
		rec, err := r.rowRecord(d)
		if err != nil {
			return nil, nil, err
		}
		if rec == nil {
			continue
		}
		// Epochs other than this run's recipe (or its reference, when it
		// changed them) are marked as such.
		ref := rc.Epochs
		if rc.Reference > 0 {
			ref = rc.Reference
		}
		s := shownRecipe{Epochs: rec.Epochs, Describe: rec.Recipe}
		if rec.Epochs != ref {
			s.Reference = ref
		}
		rows, shown[d] = append(rows, d), s
	}
	return rows, shown, nil
}

// shownRecipe is how the table shows a row's recipe.
type shownRecipe struct {
	Epochs, Reference int
	Describe          string
}
