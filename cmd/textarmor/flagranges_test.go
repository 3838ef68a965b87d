package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// flagRangeCase is one out-of-range flag value: the command line and what
// stderr must name (the flag and the value given).
type flagRangeCase struct {
	args []string
	want string
}

// checkFlagRanges runs each case and wants a usage error (exit 2) naming the
// flag and its value. The values are refused right after parsing, so none of
// the commands reads data or trains.
func checkFlagRanges(t *testing.T, cases []flagRangeCase) {
	t.Helper()
	for _, c := range cases {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, " must be ") {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 and %q ... must be ...", c.args, code, stderr, stdout, c.want)
		}
	}
}

// TestTrainFlagRanges: the architecture, preprocessing and defense flags of
// train, and the values its range messages now name.
func TestTrainFlagRanges(t *testing.T) {
	tr := func(args ...string) []string { return append([]string{"train"}, args...) }
	def := func(name string, args ...string) []string { return tr(append([]string{"--defense", name}, args...)...) }
	checkFlagRanges(t, []flagRangeCase{
		// checkTrainNumbers' rows now name the value given.
		{tr("--epochs", "0"), "--epochs 0"},
		{tr("--momentum", "1"), "--momentum 1"},
		{tr("--checkpoint-every", "-1s"), "--checkpoint-every -1s"},
		{tr("--embed-lr-scale", "-2"), "--embed-lr-scale -2"},
		{tr("--max-vocab", "-2"), "--max-vocab -2"},
		{tr("--lr-decay-epochs", "5,0"), "epoch 0 must be at least 1"},
		// Architecture sizes are bounded above (they size allocations).
		{tr("--embed-dim", "10001"), "--embed-dim 10001"},
		{tr("--filters", "10001"), "--filters 10001"},
		{tr("--hidden", "10001"), "--hidden 10001"},
		{tr("--input-layer", "10001"), "--input-layer 10001"},
		{tr("--head-hidden", "-1"), "--head-hidden -1"},
		{tr("--widths", "3,0"), "width 0 must be in [1, 1000]"},
		{tr("--widths", "3,5000"), "width 5000 must be in [1, 1000]"},
		// FTML and CML.
		{def("ftml", "--ftml-beta", "-1"), "--ftml-beta -1"},
		{def("ftml", "--ftml-alpha", "-0.5"), "--ftml-alpha -0.5"},
		{def("ftml", "--ftml-k", "0"), "--ftml-k 0"},
		{def("cml", "--ftml-k", "1001"), "--ftml-k 1001"},
		{def("cml", "--cml-tau", "0"), "--cml-tau 0"},
		// The baselines.
		{def("sem", "--sem-k", "-1"), "--sem-k -1"},
		{def("atfl", "--atfl-steps", "-1"), "--atfl-steps -1"},
		{def("ascc", "--ascc-steps", "-1"), "--ascc-steps -1"},
		{def("ascc", "--ascc-lr", "0"), "--ascc-lr 0"},
		{def("ascc", "--ascc-entropy", "-1"), "--ascc-entropy -1"},
		{def("ascc", "--ascc-beta", "-1"), "--ascc-beta -1"},
		{def("ibp", "--ibp-kappa", "1.5"), "--ibp-kappa 1.5"},
		{def("ibp", "--ibp-eps", "-1"), "--ibp-eps -1"},
		{def("ibp", "--ibp-ramp-epochs", "-2"), "--ibp-ramp-epochs -2"},
		// FLAT and adversarial training rounds.
		{def("flat", "--flat-beta", "-1"), "--flat-beta -1"},
		{def("spgd", "--spgd-eps", "0"), "--spgd-eps 0"},
		{def("spgd", "--spgd-sigma", "1"), "--spgd-sigma 1"},
		{def("spgd", "--spgd-steps", "0"), "--spgd-steps 0"},
		{def("iadvt", "--iadvt-k", "0"), "--iadvt-k 0"},
		{def("advt", "--advt-lambda", "-1"), "--advt-lambda -1"},
		{def("freelb", "--freelb-n", "0"), "--freelb-n 0"},
		{def("carl", "--freelb-alpha", "-2"), "--freelb-alpha -2"},
		{def("carl", "--carl-tau", "0"), "--carl-tau 0"},
		{def("carl", "--carl-momentum", "1"), "--carl-momentum 1"},
		{def("carl", "--carl-negatives", "-1"), "--carl-negatives -1"},
		{def("carl", "--carl-start-epoch", "0"), "--carl-start-epoch 0"},
		{def("carl", "--carl-loss", "softmax"), "--carl-loss"},
		{def("rar", "--rar-weight", "-1"), "--rar-weight -1"},
		{tr("--embed-dropout", "1"), "--embed-dropout 1"},
		{def("flat", "--flat-gamma", "-0.1"), "--flat-gamma -0.1"},
		{def("adv", "--rounds", "0"), "--rounds 0"},
		{def("adv", "--round-epochs", "0"), "--round-epochs 0"},
		{def("flat", "--round-examples", "-1"), "--round-examples -1"},
		{def("adv", "--round-workers", "0"), "--round-workers 0"},
		// The group-mask baseline.
		{def("standard", "--group-mask", "10000001"), "--group-mask 10000001"},
	})
	for _, c := range []flagRangeCase{{def("freelb", "--freelb-row", "imdb"), `--freelb-row: unknown FreeLB row "imdb"`},
		{def("freelb", "--carl-tau", "0.1"), "--carl-tau needs --defense carl"}} {
		if code, _, stderr := runCmd(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q", c.args, code, stderr)
		}
	}
	// --ftml-norm is checked with the other defense flags now, not once
	// the data and the synonym table are read.
	if code, _, stderr := runCmd(t, def("ftml", "--ftml-norm", "3")...); code != 2 || !strings.Contains(stderr, `--ftml-norm "3"`) {
		t.Errorf("--ftml-norm 3: exit %d, %q", code, stderr)
	}
}

// TestAttackFlagRanges: attack's counts and its --nn-* and --explain-*
// flags are checked before --model is even looked at.
func TestAttackFlagRanges(t *testing.T) {
	at := func(args ...string) []string { return append([]string{"attack", "--recipe", "textfooler"}, args...) }
	checkFlagRanges(t, []flagRangeCase{
		{at("--n", "-1"), "--n -1"},
		{at("--query-budget", "-1"), "--query-budget -1"},
		{at("--workers", "0"), "--workers 0"},
		{at("--workers", "100000000"), "--workers 100000000"},
		{at("--nn-k", "0"), "--nn-k 0"},
		{at("--nn-cos", "1.5"), "--nn-cos 1.5"},
		{at("--nn-vocab", "-1"), "--nn-vocab -1"},
		{at("--explain", "ig", "--explain-k", "0"), "--explain-k 0"},
		{at("--explain", "ig", "--explain-pairs", "-1"), "--explain-pairs -1"},
	})
}

// TestBenchFlagRanges: the flags of bench and its table subcommands. The
// other arguments fail right after the numbers are checked (an unknown
// backend, arch or row), so that nothing runs where a check is missing.
func TestBenchFlagRanges(t *testing.T) {
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	ftml := func(args ...string) []string {
		return append([]string{"bench", "ftml-table", "--data", data, "--out", out, "--model", "lstm"}, args...)
	}
	recipe := func(flags string) []string {
		return []string{"bench", "ftml-table", "--data", data, "--out", out, "--recipe-flags", flags, "--defenses", "nope"}
	}
	flat := func(args ...string) []string { return append([]string{"bench", "flat-table"}, args...) }
	defs := func(args ...string) []string { return append([]string{"bench", "defenses"}, args...) }
	checkFlagRanges(t, []flagRangeCase{
		{[]string{"bench", "--time", "0s", "--blas", "nope"}, "--time 0s"},
		{defs("--n", "-1"), "--n -1"},
		{defs("--batch", "0"), "--batch 0"},
		{defs("--lr", "0"), "--lr 0"},
		{defs("--repeats", "0"), "--repeats 0"},
		{defs("--min-count", "-1"), "--min-count -1"},
		{defs("--embed-dim", "0"), "--embed-dim 0"},
		{defs("--dropout", "1"), "--dropout 1"},
		{flat("--n", "-2"), "--n -2"},
		{flat("--workers", "0"), "--workers 0"},
		{flat("--flat-lr", "0"), "--flat-lr 0"},
		{flat("--max-len", "-1"), "--max-len -1"},
		{ftml("--n", "-1"), "--n -1"},
		{ftml("--first", "-1"), "--first -1"},
		{ftml("--train-n", "-2"), "--train-n -2"},
		{ftml("--clean-n", "-2"), "--clean-n -2"},
		{ftml("--workers", "0"), "--workers 0"},
		{recipe("ibp=--ibp-kappa=2"), "--ibp-kappa 2"},
		{recipe("ibp=--hidden=0"), "--hidden 0"},
		{recipe("standard=--clip=-1"), "--clip -1"},
	})
	if code, _, stderr := runCmd(t, flat("--flat-lr", "fast")...); code != 2 || !strings.Contains(stderr, `invalid value "fast" for flag -flat-lr`) {
		t.Errorf("--flat-lr fast: exit %d: %s", code, stderr)
	}
	// NaN is refused as on the command line.
	if code, _, stderr := runCmd(t, recipe("ascc=--ascc-lr=NaN")...); code != 2 || !strings.Contains(stderr, "--ascc-lr NaN: want a finite number") {
		t.Errorf("--recipe-flags ascc=--ascc-lr=NaN: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused table wrote %s", out)
	}
}

// TestEmbedLMDataDemoFlagRanges: embed stats, embed train, embed
// counterfit, lm train, data stats and demo.
func TestEmbedLMDataDemoFlagRanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	stats := func(args ...string) []string { return append([]string{"embed", "stats"}, args...) }
	et := func(args ...string) []string { return append([]string{"embed", "train"}, args...) }
	cf := func(args ...string) []string { return append([]string{"embed", "counterfit"}, args...) }
	checkFlagRanges(t, []flagRangeCase{
		{stats("--alpha", "-1"), "--alpha -1"},
		{stats("--anchors", "0"), "--anchors 0"},
		{stats("--anchors", "-2"), "--anchors -2"},
		{et("--dim", "10001"), "--dim 10001"},
		{et("--epochs", "0"), "--epochs 0"},
		{et("--window", "0"), "--window 0"},
		{et("--negative", "0"), "--negative 0"},
		{et("--min-count", "0"), "--min-count 0"},
		{et("--sample", "-1"), "--sample -1"},
		{et("--alpha", "0"), "--alpha 0"},
		{et("--workers", "257"), "--workers 257"},
		{cf("--k1", "-1"), "--k1 -1"},
		{cf("--k2", "-1"), "--k2 -1"},
		{cf("--k3", "-1"), "--k3 -1"},
		{cf("--delta", "3"), "--delta 3"},
		{cf("--gamma", "-0.5"), "--gamma -0.5"},
		{cf("--rho", "2.5"), "--rho 2.5"},
		{cf("--max-vsp", "-1"), "--max-vsp -1"},
		{cf("--iters", "0"), "--iters 0"},
		{[]string{"lm", "train", "--order", "4"}, "--order 4"},
		{[]string{"lm", "train", "--min-count", "0"}, "--min-count 0"},
		{[]string{"data", "stats", "--max-len", "-1"}, "--max-len -1"},
		{[]string{"data", "stats", "--min-count", "-1"}, "--min-count -1"},
		{[]string{"data", "stats", "--max-vocab", "-2"}, "--max-vocab -2"},
		// --epochs 0 trained the default 10 epochs; the folder under a
		// file makes a run that got past the check fail early.
		{[]string{"demo", "--epochs", "0", "--out", filepath.Join(file, "demo"), "--quiet"}, "--epochs 0"},
	})
}

// TestFlagDefaultsInRange: every command's defaults pass the range checks
// (each of these fails on something else: a missing required flag, an
// unknown backend or architecture).
func TestFlagDefaultsInRange(t *testing.T) {
	dir := t.TempDir()
	rangeErr := regexp.MustCompile(`--[a-z0-9-]+ \S+ must be `)
	var cases [][]string
	for _, d := range []string{"standard", "ftml", "cml", "sem", "atfl", "ascc", "ibp", "flat", "adv"} {
		cases = append(cases, []string{"train", "--defense", d})
	}
	for _, r := range []string{"textfooler", "ga", "iga", "pwws"} {
		cases = append(cases, []string{"attack", "--recipe", r, "--explain", "ig"})
	}
	cases = append(cases,
		[]string{"bench", "--blas", "nope"},
		[]string{"bench", "defenses"},
		[]string{"bench", "flat-table"},
		[]string{"bench", "ftml-table", "--data", dir, "--out", filepath.Join(dir, "out"), "--defenses", "nope"},
		[]string{"bench", "ftml-table", "--data", dir, "--out", filepath.Join(dir, "out"), "--defenses", "nope", "--quick"},
		[]string{"embed", "stats"},
		[]string{"embed", "train"},
		[]string{"embed", "counterfit"},
		[]string{"lm", "train"},
		[]string{"data", "stats"},
	)
	for _, args := range cases {
		code, _, stderr := runCmd(t, args...)
		if code != 2 || rangeErr.MatchString(stderr) {
			t.Errorf("%q: exit %d, %q; want exit 2 for another reason than a range", args, code, stderr)
		}
	}
}

// --embed-lr-scale reaches the optimizer: the run says so and the model's
// training record keeps it; with sgd it is refused.
func TestEmbedLRScaleFlag(t *testing.T) {
	dir, tr, dv, _ := sentimentFiles(t)
	out := filepath.Join(dir, "m")
	code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "cnn", "--embed-dim", "8", "--filters", "4",
		"--epochs", "1", "--embed-lr-scale", "5", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stderr, "learning rate of embedding") || !strings.Contains(stderr, "×5") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil || !strings.Contains(string(raw), `"lr_scale"`) {
		t.Errorf("training record: %v %s", err, raw)
	}
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--optimizer", "sgd", "--embed-lr-scale", "5", "--out", out+"2"); code != 2 || !strings.Contains(stderr, "adam") {
		t.Errorf("sgd: exit %d: %s", code, stderr)
	}
}
