package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/tensor"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// sentimentFiles writes the small generated task most train tests use: a
// 200-example training CSV, a 60-example dev CSV and a synonym file, in a
// fresh temporary folder.
func sentimentFiles(t *testing.T) (dir, train, dev, synonyms string) {
	t.Helper()
	dir = t.TempDir()
	train, dev, synonyms = filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv"), filepath.Join(dir, "syn.json")
	writeCSV(t, train, 200, 1)
	writeCSV(t, dev, 60, 2)
	writeSynonyms(t, synonyms)
	return dir, train, dev, synonyms
}

// writeCSV writes generated examples as a CSV file with a header.
func writeCSV(t *testing.T, path string, n int, seed int64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("text,label\n")
	for _, e := range synth.Sentiment(n, 0, seed) {
		fmt.Fprintf(&b, "%q,%d\n", e.Text, e.Label)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, c := range commands() {
		args := []string{c.name, "--help"}
		if c.name == "data" {
			args = []string{"data", "stats", "--help"}
		}
		code, _, stderr := runCmd(t, args...)
		if code != 0 || !strings.Contains(stderr, "Usage: textarmor") {
			t.Errorf("%s --help: code %d, output %q", c.name, code, stderr)
		}
		if c.name == "train" && !strings.Contains(stderr, "(default 64)") {
			t.Errorf("train --help does not show defaults:\n%s", stderr)
		}
	}
	if code, _, _ := runCmd(t, "nope"); code != 2 {
		t.Errorf("unknown command exit %d, want 2", code)
	}
}

// TestTrainEvalPredictFiles runs the CLI end to end on generated CSV files.
func TestTrainEvalPredictFiles(t *testing.T) {
	dir := t.TempDir()
	tr, dv, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "dev.csv"), filepath.Join(dir, "test.csv")
	writeCSV(t, tr, 600, 1)
	writeCSV(t, dv, 100, 2)
	writeCSV(t, te, 200, 3)
	out := filepath.Join(dir, "model")
	code, stdout, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--test", te, "--model", "cnn",
		"--embed-dim", "32", "--filters", "16", "--epochs", "5", "--batch", "32", "--lr", "0.005", "--out", out, "--quiet", "--json")
	if code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("train --json output %q: %v", stdout, err)
	}
	if acc := rep["accuracy"].(float64); acc < 0.8 {
		t.Fatalf("test accuracy %.3f on an easy generated task", acc)
	}
	if _, err := os.Stat(out + ".ckpt"); !os.IsNotExist(err) {
		t.Errorf("checkpoint left behind after a finished run")
	}
	// The model records the BLAS kernels that trained it: another CPU's
	// kernels round differently and can train other weights from the seed.
	m, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Training["blas"] != tensor.BackendDetail() {
		t.Errorf("model's training record: blas %v, want %q", m.Training["blas"], tensor.BackendDetail())
	}
	code, stdout, stderr = runCmd(t, "eval", "--model", out, "--test", te, "--json")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, stderr)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(stdout), &ev); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"accuracy", "macro_f1", "n"} {
		if _, ok := ev[k]; !ok {
			t.Errorf("eval --json lacks %q: %s", k, stdout)
		}
	}
	if ev["accuracy"] != rep["accuracy"] {
		t.Errorf("eval accuracy %v differs from train's test accuracy %v", ev["accuracy"], rep["accuracy"])
	}
	code, stdout, stderr = runCmd(t, "predict", "--model", out, "--json", "the film was great and excellent", "a dull and boring plot")
	if code != 0 {
		t.Fatalf("predict exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"label":"1"`) || !strings.Contains(lines[1], `"label":"0"`) {
		t.Errorf("predict output:\n%s", stdout)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("text,label\n\"fine text\",1\n\"broken,\n"), 0o644)
	cases := [][]string{
		{"train", "--train", filepath.Join(dir, "missing.csv"), "--out", filepath.Join(dir, "m")},
		{"train", "--train", bad, "--out", filepath.Join(dir, "m")},
		{"train", "--dataset", "nope", "--out", filepath.Join(dir, "m")},
		{"train", "--train", bad},
		{"eval", "--model", filepath.Join(dir, "nomodel"), "--test", bad},
		{"train", "--train", bad, "--out", filepath.Join(dir, "m"), "--model", "gru"},
	}
	for _, args := range cases {
		code, _, stderr := runCmd(t, args...)
		if code == 0 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if strings.Contains(stderr, "panic") {
			t.Errorf("%v panicked: %s", args, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); !os.IsNotExist(err) {
		t.Error("a failed run left a model directory behind")
	}
}

func TestCorruptModelIsAnError(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	writeCSV(t, tr, 100, 1)
	out := filepath.Join(dir, "model")
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--epochs", "1", "--embed-dim", "8", "--filters", "4", "--out", out, "--quiet"); code != 0 {
		t.Fatal(stderr)
	}
	w := filepath.Join(out, "model.safetensors")
	data, _ := os.ReadFile(w)
	os.WriteFile(w, data[:len(data)/2], 0o644)
	code, _, stderr := runCmd(t, "predict", "--model", out, "x")
	if code == 0 || !strings.Contains(stderr, "model.safetensors") {
		t.Errorf("truncated model: exit %d, %q", code, stderr)
	}
}

func TestDemoRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("demo trains four models")
	}
	code, stdout, stderr := runCmd(t, "demo", "--epochs", "1", "--quiet")
	if code != 0 {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	for _, want := range []string{"cnn", "bilstm", "standard", "ftml", "test acc", "acc under attack"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestTrainResumeOfFinishedRun: train --resume on a completed run says
// there is nothing to resume (exit 2) and leaves the model untouched.
func TestTrainResumeOfFinishedRun(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	writeCSV(t, tr, 100, 1)
	out := filepath.Join(dir, "model")
	args := []string{"train", "--train", tr, "--model", "cnn", "--embed-dim", "8", "--filters", "4", "--epochs", "1", "--out", out, "--quiet"}
	if code, _, stderr := runCmd(t, args...); code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, "model.safetensors"))
	code, _, stderr := runCmd(t, append(args, "--resume")...)
	if code != 2 || !strings.Contains(stderr, "nothing to resume") {
		t.Errorf("resume of a finished run: exit %d, %s", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "model.safetensors")); string(before) != string(after) {
		t.Error("the finished model was overwritten")
	}
}

// TestTrainRejectsBadNumbers: NaN, infinities and out-of-range numbers are
// usage errors naming the flag (they used to panic or become defaults).
func TestTrainRejectsBadNumbers(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	writeCSV(t, tr, 20, 1)
	for _, c := range [][2]string{
		{"--epochs", "0"}, {"--batch", "0"}, {"--lr", "nan"}, {"--lr", "0"}, {"--lr", "-1"}, {"--weight-decay", "nan"},
		{"--momentum", "nan"}, {"--clip", "nan"}, {"--clip", "+Inf"}, {"--dropout", "nan"}, {"--dropout", "1"},
		{"--max-len", "-3"}, {"--warmup", "nan"}, {"--lr-decay", "nan"}, {"--embed-dim", "0"}, {"--patience", "-1"},
	} {
		code, _, stderr := runCmd(t, "train", "--train", tr, "--out", filepath.Join(dir, "m"), c[0], c[1])
		if code != 2 || !strings.Contains(stderr, c[0]) {
			t.Errorf("%s %s: exit %d, %q", c[0], c[1], code, stderr)
		}
	}
}

// TestStrayArgumentsRefused: a positional argument to a command that takes
// none is a usage error (Go's flag parsing stopped there and dropped every
// flag after it), and so is an unknown bench subcommand.
func TestStrayArgumentsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"train", "--train", "x.csv", "stray", "--epochs", "3"},
		{"eval", "--model", "m", "stray"},
		{"attack", "--model", "m", "stray", "--recipe", "pwws"},
		{"demo", "stray"},
		{"importance", "--model", "m", "stray"},
		{"data", "stats", "--dataset", "trec", "stray"},
		{"eval-sts", "--model", "m", "stray"},
		{"export", "--model", "m", "--out", "o", "stray"},
		{"bench", "ftml"},
		{"bench", "--time", "1s", "stray"},
		{"bench", "transformer", "stray"},
		{"bench", "gemm", "stray"},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !(strings.Contains(stderr, "stray") || strings.Contains(stderr, `"ftml"`)) {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestOutputsAreLocked: a train or attack whose output another live
// process holds fails naming that process, before writing anything.
func TestOutputsAreLocked(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	writeCSV(t, tr, 40, 1)
	out, csv := filepath.Join(dir, "model"), filepath.Join(dir, "res.csv")
	holder := fmt.Sprintf("%d\n", os.Getpid()) // this test process: alive
	for _, lock := range []string{out + ".lock", csv + ".lock"} {
		if err := os.WriteFile(lock, []byte(holder), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runCmd(t, "train", "--train", tr, "--model", "cnn", "--embed-dim", "8", "--filters", "4", "--epochs", "1", "--out", out, "--quiet")
	if code == 0 || !strings.Contains(stderr, "in use by process") {
		t.Errorf("train into a locked output: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("train wrote %s while it was locked", out)
	}
	code, _, stderr = runCmd(t, "attack", "--model", out, "--test", tr, "--recipe", "pwws", "--out", csv)
	if code == 0 || !strings.Contains(stderr, "in use by process") {
		t.Errorf("attack into a locked CSV: exit %d, %s", code, stderr)
	}
	// A lock left by a process that no longer runs is taken over.
	os.WriteFile(out+".lock", []byte("999999999\n"), 0o644)
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--model", "cnn", "--embed-dim", "8", "--filters", "4", "--epochs", "1", "--out", out, "--quiet"); code != 0 {
		t.Errorf("train after a stale lock: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out + ".lock"); !os.IsNotExist(err) {
		t.Error("the lock was not released")
	}
}

// TestExplainRejectsBadCounts: --steps and --samples out of range are
// usage errors (0 silently became the default; 1 sample gave all-zero
// scores).
func TestExplainRejectsBadCounts(t *testing.T) {
	for _, c := range [][2]string{{"--steps", "0"}, {"--samples", "0"}, {"--samples", "1"}, {"--steps", "-5"}, {"--samples", "100000000"}} {
		code, _, stderr := runCmd(t, "explain", "--model", "m", c[0], c[1], "a text")
		if code != 2 || !strings.Contains(stderr, c[0]+" "+c[1]+" must be") {
			t.Errorf("%s %s: exit %d, %q", c[0], c[1], code, stderr)
		}
	}
}

// TestTrainRefusesUnusableOutBeforeTraining: an --out that cannot be
// written fails before the first epoch.
func TestTrainRefusesUnusableOutBeforeTraining(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	writeCSV(t, tr, 40, 1)
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	code, _, stderr := runCmd(t, "train", "--train", tr, "--model", "cnn", "--embed-dim", "8", "--filters", "4", "--epochs", "1",
		"--out", filepath.Join(file, "model"))
	if code == 0 || strings.Contains(stderr, "epoch 1") {
		t.Errorf("--out under a file: exit %d, %s", code, stderr)
	}
}

// TestPredictOneLinePerInputLine: predict prints one line per stdin line,
// blank ones included, and writes control characters of the echoed text
// as \xNN instead of sending them to the terminal.
func TestPredictOneLinePerInputLine(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train.csv")
	writeCSV(t, tr, 60, 1)
	out := filepath.Join(dir, "model")
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--model", "cnn", "--embed-dim", "8", "--filters", "4", "--epochs", "1", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("train exit %d: %s", code, stderr)
	}
	in := filepath.Join(dir, "in.txt")
	os.WriteFile(in, []byte("a good film\n\n\x1b[31mred\x1b[0m text\nthe end\n"), 0o644)
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	code, stdout, stderr := runCmd(t, "predict", "--model", out)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) != 4 || strings.ContainsRune(stdout, '\x1b') || !strings.Contains(lines[2], `\x1b[31mred`) {
		t.Errorf("exit %d, %d lines %q: %s", code, len(lines), stdout, stderr)
	}
}

// TestNonFiniteFlagsRefusedEverywhere: NaN and infinities are usage errors
// for the numeric flags of every command, not only train's.
func TestNonFiniteFlagsRefusedEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"embed", "train", "--alpha", "nan", "--out", "x.vec"},
		{"embed", "counterfit", "--k1", "inf", "--vectors", "v", "--out", "x"},
		{"attack", "--model", "m", "--recipe", "textfooler", "--nn-cos", "NaN"},
		{"eval-sts", "--model", "m", "--data", "no-data", "--split", "test", "--blas", "gonum", "--json"}, // no float flag: reaches the data (missing)
	} {
		code, _, stderr := runCmd(t, args...)
		if args[0] == "eval-sts" {
			// Past the flag checks: the missing data is the error.
			if code != 1 || strings.Contains(stderr, "finite") || !strings.Contains(stderr, "no-data") {
				t.Errorf("eval-sts without a float flag: exit %d, %q", code, stderr)
			}
			continue
		}
		if code != 2 || !strings.Contains(stderr, "finite") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestDataFolderHasNoDefault: without --data and TEXTARMOR_DATA a command
// that needs the benchmark data says how to give it (it used to read
// ../shared/data, a path of the machine the code was written on).
func TestDataFolderHasNoDefault(t *testing.T) {
	t.Setenv("TEXTARMOR_DATA", "")
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// Even where ../shared/data exists, it is not read.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "shared", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(work); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(cwd)
	for _, args := range [][]string{
		{"data", "stats", "--dataset", "trec"},
		{"train", "--dataset", "sst2", "--out", filepath.Join(dir, "m")},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, "--data DIR or set TEXTARMOR_DATA") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestHelpIsGroupedAndSpeltAsUsed: a command with many flags lists them in
// groups, each spelt --name as the README writes them.
func TestHelpIsGroupedAndSpeltAsUsed(t *testing.T) {
	code, _, stderr := runCmd(t, "train", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"\nData:\n", "\nTraining:\n", "\nFTML and CML (--defense ftml, cml):\n", "\nIBP (--defense ibp):\n", "  --epochs int\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("train --help lacks %q", want)
		}
	}
	if strings.Contains(stderr, "\n  -epochs") {
		t.Error("train --help spells a flag with one dash")
	}
	if strings.Contains(stderr, "\nOther:\n") {
		t.Errorf("train --help has flags no group claims:\n%s", stderr[strings.Index(stderr, "\nOther:\n"):])
	}
	_, _, stderr = runCmd(t, "attack", "--help")
	if !strings.Contains(stderr, "\nAttack:\n") || !strings.Contains(stderr, "\nResources:\n") || strings.Contains(stderr, "\nOther:\n") {
		t.Errorf("attack --help is not grouped as an attack's flags:\n%s", stderr)
	}
}

func TestCompletionBash(t *testing.T) {
	code, stdout, _ := runCmd(t, "completion", "bash")
	if code != 0 || !strings.Contains(stdout, "complete -o filenames -F _textarmor textarmor") || !strings.Contains(stdout, "attack bench completion") {
		t.Fatalf("completion bash: exit %d\n%s", code, stdout)
	}
	if code, _, _ := runCmd(t, "completion", "fish"); code != 2 {
		t.Fatalf("completion fish: exit %d, want 2", code)
	}
}
