package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/internal/synth"
	"github.com/textarmor/textarmor/model"
)

func TestTrainRetrofit(t *testing.T) {
	dir, tr, dv, syn := sentimentFiles(t)
	// Frozen embeddings, so the saved table is the retrofitted initial one.
	common := []string{"train", "--train", tr, "--dev", dv, "--model", "cnn", "--embed-dim", "16", "--filters", "8",
		"--epochs", "1", "--batch", "32", "--freeze-embeddings", "--quiet", "--synonyms", syn}
	meanSynCos := func(out string) float64 {
		m, err := model.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		d := m.Net.Cfg.EmbedDim
		tb := m.Net.Emb.W.Value.Data
		var sum float64
		n := 0
		for w, syns := range synth.DefaultLexicon().Synonyms() {
			a := m.Vocab.ID(w)
			for _, s := range syns {
				b := m.Vocab.ID(s)
				if a < 2 || b < 2 {
					continue
				}
				var ab, aa, bb float64
				for k := 0; k < d; k++ {
					x, y := float64(tb[int(a)*d+k]), float64(tb[int(b)*d+k])
					ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
				}
				sum += ab / math.Sqrt(aa*bb)
				n++
			}
		}
		if n == 0 {
			t.Fatal("no synonym pair in the vocabulary")
		}
		return sum / float64(n)
	}
	plain := filepath.Join(dir, "plain")
	if code, _, stderr := runCmd(t, append(common, "--out", plain)...); code == 0 || !strings.Contains(stderr, "--synonyms needs") {
		t.Fatalf("--synonyms without --retrofit: exit %d: %s", code, stderr)
	}
	common = common[:len(common)-2]
	if code, _, stderr := runCmd(t, append(common, "--out", plain)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fitted := filepath.Join(dir, "fitted")
	code, _, stderr := runCmd(t, append(common, "--synonyms", syn, "--retrofit", "10", "--out", fitted)...)
	if code != 0 || !strings.Contains(stderr, "retrofit: 10 sweeps over "+syn) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before, after := meanSynCos(plain), meanSynCos(fitted)
	if after < before+0.3 {
		t.Fatalf("mean synonym cosine %.3f without retrofitting, %.3f with", before, after)
	}
	if code, _, stderr := runCmd(t, append(common, "--synonyms", syn, "--retrofit", "3", "--embeddings-from", fitted, "--out", filepath.Join(dir, "x"))...); code == 0 {
		t.Fatalf("--retrofit with --embeddings-from accepted: %s", stderr)
	}
}
