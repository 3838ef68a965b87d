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
)

// BenchmarkAttackCLI times 'textarmor attack' end to end (model and
// resource loading, neighbour table from the cache, the attack, the results
// file) on a generated task: 100 test texts against a small CNN, two
// workers. examples/s and queries/s are over the whole command.
//
//	go test ./cmd/textarmor -run '^$' -bench BenchmarkAttackCLI -benchtime 3x
func BenchmarkAttackCLI(b *testing.B) {
	dir := b.TempDir()
	tr, te, syn, vec := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv"), filepath.Join(dir, "syn.json"), filepath.Join(dir, "vec.txt")
	for _, f := range []struct {
		path string
		n    int
		seed int64
	}{{tr, 300, 1}, {te, 100, 3}} {
		var s strings.Builder
		s.WriteString("text,label\n")
		for _, e := range synth.Sentiment(f.n, 0, f.seed) {
			fmt.Fprintf(&s, "%q,%d\n", e.Text, e.Label)
		}
		if err := os.WriteFile(f.path, []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	lex := synth.DefaultLexicon()
	table := lex.Synonyms()
	raw, _ := json.Marshal(table)
	if err := os.WriteFile(syn, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	writeVectors(b, vec)
	mdir := filepath.Join(dir, "model")
	var o, e bytes.Buffer
	if code := run([]string{"train", "--train", tr, "--model", "cnn", "--embed-dim", "32", "--filters", "32",
		"--epochs", "3", "--batch", "32", "--lr", "0.01", "--out", mdir, "--quiet"}, &o, &e); code != 0 {
		b.Fatalf("train: %s", e.String())
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"pwws-ftml", []string{"--recipe", "pwws", "--protocol", "ftml", "--synonyms", syn}},
		{"textfooler-vectors", []string{"--recipe", "textfooler", "--vectors", vec}},
		{"ga-ftml", []string{"--recipe", "ga", "--protocol", "ftml", "--synonyms", syn}},
		{"pso-ftml", []string{"--recipe", "pso", "--protocol", "ftml", "--synonyms", syn}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var queries, examples float64
			for i := 0; i < b.N; i++ {
				o.Reset()
				e.Reset()
				out := filepath.Join(dir, fmt.Sprintf("%s-%d.csv", tc.name, i))
				args := append([]string{"attack", "--model", mdir, "--test", te, "--workers", "2", "--json", "--quiet", "--out", out}, tc.args...)
				if code := run(args, &o, &e); code != 0 {
					b.Fatalf("%v: %s", args, e.String())
				}
				var rep struct {
					N          float64 `json:"n"`
					Skipped    float64 `json:"skipped"`
					AvgQueries float64 `json:"avg_queries"`
				}
				if err := json.Unmarshal(o.Bytes(), &rep); err != nil {
					b.Fatal(err)
				}
				queries += rep.AvgQueries * (rep.N - rep.Skipped)
				examples += rep.N
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(examples/sec, "examples/s")
			b.ReportMetric(queries/sec, "queries/s")
		})
	}
}
