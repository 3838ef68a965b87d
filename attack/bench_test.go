package attack

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// benchVictim is a generated CNN victim (the synthetic task's vocabulary,
// 64-dimensional embeddings, 100 filters per width) and ~60-word examples
// made of the synthetic texts, labelled with the model's own predictions so
// that none is skipped.
func benchVictim(b *testing.B) (Target, Resources, []Example) {
	tg, syn, ex := synthTask()
	cfg := nn.DefaultConfig("cnn")
	cfg.VocabSize, cfg.EmbedDim, cfg.Filters = tg.Vocab.Len(), 64, 100
	cfg.EmbedInit = 1
	m, err := nn.New(cfg, rand.New(rand.NewSource(11)))
	if err != nil {
		b.Fatal(err)
	}
	for i := range m.Out.W.Value.Data {
		m.Out.W.Value.Data[i] *= 8
	}
	tg.MaxLen = 0
	var long []Example
	var seqs [][]int32
	for i := 0; i+5 < len(ex); i += 2 {
		parts := make([]string, 6)
		for j := range parts {
			parts[j] = ex[i+j].Text
		}
		e := Example{Index: len(long), Text: strings.Join(parts, " ")}
		long = append(long, e)
		seqs = append(seqs, tg.Vocab.Encode(text.Texts(tg.Tok.Tokenize(e.Text)), 0))
	}
	var shift float64
	for _, p := range m.Predict(seqs) {
		shift += math.Log(float64(p[1]) / float64(p[0]))
	}
	m.Out.B.Value.Data[1] -= float32(shift / float64(len(seqs)))
	for i := range long {
		long[i].Label = nn.Argmax(m.Predict(seqs[i : i+1])[0])
	}
	tg.Victim = m
	w := m.Emb.W.Value
	tab := text.TableVectors("bench embedding table", tg.Vocab, w.Shape[1], w.Data)
	// No word-embedding distance: on the random embedding table it would
	// reject every substitute. The encoder is for hla only (textfooler's
	// sentence-similarity threshold would reject most of them too).
	res := Resources{Synonyms: syn, WordNet: syn, Encoder: MeanVectorEncoder{Table: tab}}
	return tg, res, long
}

// BenchmarkRecipe measures each recipe's throughput on the generated CNN
// victim: one op attacks every example once (one worker); queries/s counts
// the model queries the attack makes (cached and incremental ones included).
//
//	go test ./attack -run '^$' -bench BenchmarkRecipe -benchtime 3x
func BenchmarkRecipe(b *testing.B) {
	benchRecipes(b, RunOptions{Workers: 1})
}

// BenchmarkRecipeMerged is BenchmarkRecipe with two workers whose full
// forward passes are merged into one model call (RunOptions.MergeBatches);
// compare with BenchmarkRecipeWorkers2.
func BenchmarkRecipeMerged(b *testing.B) {
	benchRecipes(b, RunOptions{Workers: 2, MergeBatches: true})
}

// BenchmarkRecipeWorkers2 is BenchmarkRecipe with two workers.
func BenchmarkRecipeWorkers2(b *testing.B) {
	benchRecipes(b, RunOptions{Workers: 2})
}

func benchRecipes(b *testing.B, opt RunOptions) {
	tg, res, ex := benchVictim(b)
	for _, rc := range Recipes() {
		b.Run(rc.Name, func(b *testing.B) {
			protocol := ProtocolPaper
			if rc.Name == "pwws" {
				protocol = ProtocolFTML
			}
			r := res
			if rc.Name != "hla" {
				r.Encoder = nil
			}
			c, err := rc.Build(protocol, r)
			if err != nil {
				b.Fatal(err)
			}
			queries, examples := 0, 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := opt
				o.Seed = int64(i)
				rs, err := RunAll(context.Background(), c.Attack, tg, ex, o)
				if err != nil {
					b.Fatal(err)
				}
				for _, x := range rs {
					queries += x.NumQueries
				}
				examples += len(rs)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(queries)/sec, "queries/s")
			b.ReportMetric(float64(examples)/sec, "examples/s")
			b.ReportMetric(float64(queries)/float64(examples), "queries/example")
		})
	}
}
