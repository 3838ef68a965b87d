package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
)

// meanSynonymDistance is the mean Euclidean distance between the
// word-embedding rows of the generated lexicon's synonym pairs.
func meanSynonymDistance(t *testing.T, m *model.Model) float64 {
	t.Helper()
	lex := synth.DefaultLexicon()
	W, d := m.Net.Emb.W.Value.Data, m.Net.Emb.Dim()
	var sum float64
	var n int
	for _, g := range append(lex.Positive, lex.Negative...) {
		for i := range g {
			for j := i + 1; j < len(g); j++ {
				a, okA := m.Pieces.ID(g[i])
				b, okB := m.Pieces.ID(g[j])
				if !okA || !okB {
					t.Fatalf("%s or %s is not a token", g[i], g[j])
				}
				var s float64
				for k := 0; k < d; k++ {
					x := float64(W[int(a)*d+k] - W[int(b)*d+k])
					s += x * x
				}
				sum += math.Sqrt(s)
				n++
			}
		}
	}
	return sum / float64(n)
}

// TestTransformerSynonymDefenses: FTML, SEM and ASCC fine-tune a (tiny)
// transformer over its dictionary words: the vocabulary supplement is
// recorded, FTML pulls synonyms together in the word-embedding table, SEM
// gives synonyms one code, and every model learns the task.
func TestTransformerSynonymDefenses(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	// The defenses start from a pretrained encoder, as from MiniLM: here a
	// tiny random one fine-tuned on the task and exported. (From random
	// word rows, which FTML's cross-entropy cannot move, the tiny encoder
	// does not learn the task in a few epochs.)
	pre := filepath.Join(dir, "pre")
	if code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", tinyHF(t, dir),
		"--epochs", "8", "--lr", "3e-3", "--batch", "16", "--out", pre, "--quiet"); code != 0 {
		t.Fatalf("pretraining: exit %d: %s", code, stderr)
	}
	hf := filepath.Join(dir, "pre-hf")
	if code, _, stderr := runCmd(t, "export", "--model", pre, "--format", "hf", "--out", hf); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	start, err := model.ImportHF(hf, model.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := meanSynonymDistance(t, start)
	for _, def := range []string{"ftml", "sem", "ascc"} {
		out := filepath.Join(dir, def)
		code, _, stderr := runCmd(t, "train", "--train", tr, "--dev", dv, "--model", "transformer", "--init", hf, "--defense", def,
			"--synonyms", syn, "--epochs", "8", "--lr", "3e-3", "--batch", "16", "--out", out, "--quiet")
		if code != 0 {
			t.Fatalf("train --init --defense %s: exit %d: %s", def, code, stderr)
		}
		if !strings.Contains(stderr, "vocabulary supplement: of the 50000 most frequent training words") {
			t.Errorf("%s: no supplement line:\n%s", def, stderr)
		}
		m, err := model.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := m.Training["vocab_supplement"].(map[string]any)
		if m.Training["defense"] != def || rec == nil || rec["dictionary"].(float64) < 20 {
			t.Errorf("%s: training record %v", def, m.Training)
		}
		if acc := accuracyOf(t, out, dv); acc < 0.75 {
			t.Errorf("%s: dev accuracy %.3f", def, acc)
		}
		switch def {
		case "ftml":
			if !strings.Contains(stderr, "ftml: alpha0 = ") {
				t.Errorf("no alpha0 line:\n%s", stderr)
			}
			if after := meanSynonymDistance(t, m); after > 0.5*before {
				t.Errorf("FTML: mean synonym distance %.4f → %.4f, want at most half", before, after)
			}
		case "sem":
			good, _ := m.Pieces.ID("good")
			great, _ := m.Pieces.ID("decent")
			if m.Net.MapID(good) != m.Net.MapID(great) {
				t.Errorf("SEM: good and decent have codes %d and %d", m.Net.MapID(good), m.Net.MapID(great))
			}
		}
	}
}

// TestBenchFTMLTableTransformer: Table 2's rows (standard, FTML, SEM,
// ASCC) fine-tune the checkpoint of --init and are attacked with the FTML
// protocol, HLA reading the checkpoint's sentence embeddings.
func TestBenchFTMLTableTransformer(t *testing.T) {
	dir, _, _, syn := sentimentFiles(t)
	hf := tinyHF(t, dir)
	old := ftmlTableData
	defer func() { ftmlTableData = old }()
	ftmlTableData = func(string) (*dataset.Dataset, dataset.Preset, error) {
		return synth.SentimentDataset(120, 0, 40, 5), dataset.Preset{Name: "synth", Tokenizer: "whitespace", MaxLen: 30, MinCount: 1}, nil
	}
	out := filepath.Join(dir, "tab")
	code, stdout, stderr := runCmd(t, "bench", "ftml-table", "--data", dir, "--synonyms", syn, "--model", "transformer", "--init", hf,
		"--max-len", "32", "--out", out, "--quick", "--attacks", "pwws,hla", "--n", "4", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"# FTML Table 2 — IMDB, transformer", "| standard |", "| ftml |", "| sem |", "| ascc |",
		"(92.4)", "(81.2)", "MiniLM sentence-embedding stand-in"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	m, err := model.Load(filepath.Join(out, "transformer", "ftml", "model"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Pieces == nil || m.Training["vocab_supplement"] == nil || m.MaxLen != 32 {
		t.Errorf("ftml row: max length %d, record %v", m.MaxLen, m.Training)
	}
	for _, args := range [][]string{
		{"--model", "transformer", "--defenses", "ibp"},
		{"--model", "cnn", "--init", hf},
		{"--model", "transformer", "--max-len", "-1"},
	} {
		args = append([]string{"bench", "ftml-table", "--data", dir, "--synonyms", syn, "--out", filepath.Join(dir, "x")}, args...)
		if code, _, stderr := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}
