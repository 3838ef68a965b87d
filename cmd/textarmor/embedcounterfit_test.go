package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/text"
)

// writeConstraints lays out DATA/counter-fitting-constraints with a small
// vocabulary (without "extra"), synonym and antonym files.
func writeConstraints(t *testing.T, data string) {
	t.Helper()
	dir := filepath.Join(data, constraintsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"vocabulary.txt":       "good\nfine\nbad\nawful\ntable\nGood\n",
		"ppdb_synonyms.txt":    "good fine\nbad awful\n",
		"ppdb_antonyms.txt":    "good bad \n",
		"wordnet_antonyms.txt": "fine awful\n",
		"SimLex-999.txt":       "word1\tword2\tPOS\tSimLex999\ngood\tfine\tA\t9\nbad\tawful\tA\t8\ngood\tbad\tA\t0.5\nfine\tawful\tA\t0.4\ntable\tzzz\tN\t0.1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEmbedCounterfit(t *testing.T) {
	dir := t.TempDir()
	writeConstraints(t, dir)
	// Distributional vectors where every sentiment word is near every
	// other (antonyms included), as word2vec puts them.
	rng := rand.New(rand.NewSource(1))
	base := make([]float64, 20)
	for i := range base {
		base[i] = rng.NormFloat64()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "6 20\n")
	for _, w := range []string{"good", "fine", "bad", "awful", "table", "extra"} {
		b.WriteString(w)
		for i := range base {
			x := rng.NormFloat64()
			if w != "table" && w != "extra" {
				x = base[i] + 0.8*x
			}
			fmt.Fprintf(&b, " %.5f", x)
		}
		b.WriteString("\n")
	}
	in := filepath.Join(dir, "in.vec")
	os.WriteFile(in, []byte(b.String()), 0o644)
	out := filepath.Join(dir, "cf.vec")
	var stdout, stderr bytes.Buffer
	if err := runEmbed([]string{"counterfit", "--vectors", in, "--out", out, "--data", dir, "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var sum struct {
		Words        int     `json:"words"`
		SimlexBefore float64 `json:"simlex_before"`
		SimlexAfter  float64 `json:"simlex_after"`
		SimlexPairs  int     `json:"simlex_pairs"`
		Stats        struct {
			Synonyms, Antonyms int
		} `json:"stats"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	// "extra" is not in the vocabulary; "Good" repeats "good".
	if sum.Words != 5 || sum.Stats.Synonyms != 4 || sum.Stats.Antonyms != 4 || sum.SimlexPairs != 4 {
		t.Errorf("summary %+v: want 5 words, 4 synonym and 4 antonym ordered pairs, 4 SimLex pairs", sum)
	}
	// Both synonym pairs must now rank above both antonym pairs: ρ ≥ 0.8.
	if sum.SimlexAfter < 0.8-1e-9 {
		t.Errorf("SimLex ρ %.3f → %.3f: want ≥ 0.8 after counter-fitting", sum.SimlexBefore, sum.SimlexAfter)
	}
	words := loadWords(t, out, 20)
	vocab, err := text.NewVocab(append([]string{text.PadWord, text.UnkWord}, words...))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := text.LoadVectors(out, vocab)
	if err != nil {
		t.Fatal(err)
	}
	c := func(a, b string) float64 {
		x, y := vs.Row(vocab.ID(a)), vs.Row(vocab.ID(b))
		var s float64
		for i := range x {
			s += float64(x[i]) * float64(y[i])
		}
		return s
	}
	if c("good", "fine") < 0.9 || c("good", "bad") > 0.1 {
		t.Errorf("cos(good, fine) %.3f, cos(good, bad) %.3f: want synonyms > 0.9, antonyms ≤ 0.1", c("good", "fine"), c("good", "bad"))
	}
	if math.Abs(c("table", "table")-1) > 1e-5 {
		t.Errorf("rows must be unit-length: |table|² = %v", c("table", "table"))
	}

	// Bad input names the file and line; missing flags are usage errors.
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("good fine\nlonely\n"), 0o644)
	err = runEmbed([]string{"counterfit", "--vectors", in, "--out", out, "--data", dir, "--synonyms", filepath.Join(dir, "bad.txt")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("malformed synonym file: error %v, want one naming bad.txt:2", err)
	}
	if err := runEmbed([]string{"counterfit", "--out", out}, &stdout, &stderr); err == nil {
		t.Error("no --vectors: no error")
	}
}
