package defense

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/optim"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/train"
)

// benchSynonyms gives each id ≥ 2 up to 8 synonyms among its neighbouring
// ids (about 70% of words have some), like the counter-fitted table's
// coverage of a sentiment vocabulary.
func benchSynonyms(vocab int, r *rand.Rand) *SynonymTable {
	ids := make([][]int32, vocab)
	for w := 2; w < vocab; w++ {
		if r.Float64() < 0.3 {
			continue
		}
		n := 1 + r.Intn(8)
		for j := 0; j < n; j++ {
			s := int32(2 + r.Intn(vocab-2))
			if int(s) != w {
				ids[w] = append(ids[w], s)
			}
		}
	}
	return NewSynonymTableIDs(ids)
}

// benchObjectives builds every objective with the spec's settings.
func benchObjectives(syn *SynonymTable) []train.Objective {
	cfg := DefaultFTMLConfig(syn)
	ftml, err := NewFTML(cfg)
	if err != nil {
		panic(err)
	}
	cml, err := NewCML(cfg, 20)
	if err != nil {
		panic(err)
	}
	ibp := NewIBP(syn)
	ibp.RampSteps = 0 // full κ and ε: the steady-state cost
	ibpProjected := NewIBP(syn)
	ibpProjected.Hull = HullProjected
	return []train.Objective{train.Standard{}, ftml, cml, NewSEM(syn), NewASCC(syn), NewATFL(syn), ibp, ibpProjected}
}

// benchObjectiveArch times one optimiser step (loss, backward, Adam) of
// every objective on the same generated batch (32 texts of 200 words, a
// 5,000-word vocabulary, the §7 architectures) and reports each one's time
// as a multiple of standard training's (x_standard): the spec's Table 3
// ratios without data. Run with -bench 'Objective' -benchtime 20x.
func benchObjectiveArch(b *testing.B, arch string, ragged bool) {
	const vocab, batch, length = 5000, 32, 200
	r := rand.New(rand.NewSource(1))
	syn := benchSynonyms(vocab, r)
	seqs := make([][]int32, batch)
	labels := make([]int, batch)
	for i := range seqs {
		n := length
		if ragged && i > 0 {
			n = 20 + r.Intn(length-19)
		}
		seqs[i] = make([]int32, n)
		for j := range seqs[i] {
			seqs[i][j] = int32(2 + r.Intn(vocab-2))
		}
		labels[i] = r.Intn(2)
	}
	var stdNs float64
	for _, obj := range benchObjectives(syn) {
		name := obj.Name()
		if p, ok := obj.(*IBP); ok && p.Hull == HullProjected {
			name = "ibp-projected"
		}
		b.Run(name, func(b *testing.B) {
			cfg := nn.DefaultConfig(arch)
			cfg.VocabSize, cfg.NumClasses = vocab, 2
			m, err := nn.New(cfg, rand.New(rand.NewSource(2)))
			if err != nil {
				b.Fatal(err)
			}
			runObjectiveSteps(b, obj, m, nn.MakeBatch(seqs, labels, m.Enc.MinLen()))
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if obj.Name() == "standard" {
				stdNs = ns
			}
			if stdNs > 0 {
				b.ReportMetric(ns/stdNs, "x_standard")
			}
		})
	}
	if arch != "bilstm" {
		return
	}
	// Jia et al.'s IBP BiLSTM (spec A16): 100-unit input layer with ReLU,
	// 100 units per direction, mean pooling, 100-unit hidden layer; the
	// hull after the input layer. The ratio is to the standard row's model.
	b.Run("ibp-jia", func(b *testing.B) {
		cfg := nn.DefaultConfig(arch)
		cfg.VocabSize, cfg.NumClasses, cfg.Dropout = vocab, 2, 0.2
		cfg.Hidden, cfg.InputLayer, cfg.HeadHidden, cfg.Pool = 100, 100, 100, "mean"
		m, err := nn.New(cfg, rand.New(rand.NewSource(2)))
		if err != nil {
			b.Fatal(err)
		}
		ibp := NewIBP(syn)
		ibp.Hull = HullProjected
		runObjectiveSteps(b, ibp, m, nn.MakeBatch(seqs, labels, m.Enc.MinLen()))
		if stdNs > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/stdNs, "x_standard")
		}
	})
}

// runObjectiveSteps times b.N optimiser steps (loss, backward, Adam) of obj
// on bt, after one untimed warm-up step (α0, SEM's map, buffers).
func runObjectiveSteps(b *testing.B, obj train.Objective, m *nn.Classifier, bt *nn.Batch) {
	params := m.Params()
	if ep, ok := obj.(train.ExtraParams); ok {
		params = append(params, ep.Params()...)
	}
	opz := optim.NewAdam(optim.AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	tp := ag.NewTape()
	tp.Train = true
	tp.Rng = rand.New(rand.NewSource(3))
	step := func() {
		tp.Reset()
		out, err := obj.Loss(tp, m, bt)
		if err != nil {
			b.Fatal(err)
		}
		tp.Backward(out.Loss)
		opz.Step(params)
		optim.ZeroGrad(params)
	}
	step()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
}

func BenchmarkObjective(b *testing.B)       { benchObjectiveArch(b, "cnn", false) }
func BenchmarkObjectiveBiLSTM(b *testing.B) { benchObjectiveArch(b, "bilstm", false) }

// BenchmarkObjectiveBiLSTMRagged gives the texts 20 to 200 words (one of
// 200), so that about half of the padded batch is padding, as on IMDB.
func BenchmarkObjectiveBiLSTMRagged(b *testing.B) { benchObjectiveArch(b, "bilstm", true) }

// BenchmarkFLATObjective times one FLAT optimiser step on the FLAT table's
// models (CNN with 200 filters per width; LSTM with 300 units, tanh, max
// pooling; frozen embeddings, word masks): 64 texts of 20 to 250 words, as
// IMDB under FLAT's preset, words drawn from a Zipf law as in text (a few
// thousand distinct words per batch), with β and γ at their defaults (no
// pairs: the clean phase).
func BenchmarkFLATObjective(b *testing.B) {
	const vocab, batch, maxLen = 20000, 64, 250
	r := rand.New(rand.NewSource(1))
	zipf := rand.NewZipf(r, 1.1, 2, vocab-3)
	seqs := make([][]int32, batch)
	labels := make([]int, batch)
	for i := range seqs {
		n := maxLen
		if i > 0 {
			n = 20 + r.Intn(maxLen-19)
		}
		seqs[i] = make([]int32, n)
		for j := range seqs[i] {
			seqs[i][j] = int32(2 + zipf.Uint64())
		}
		labels[i] = r.Intn(2)
	}
	for _, arch := range []string{"cnn", "lstm"} {
		b.Run(arch, func(b *testing.B) {
			cfg := nn.DefaultConfig(arch)
			cfg.VocabSize, cfg.NumClasses, cfg.Mask = vocab, 2, true
			cfg.Filters, cfg.Hidden, cfg.Tanh, cfg.Dropout = 200, 300, arch == "lstm", 0.2
			m, err := nn.New(cfg, rand.New(rand.NewSource(2)))
			if err != nil {
				b.Fatal(err)
			}
			m.Emb.W.Frozen = true
			f, err := NewFLAT(0.1, 0.001)
			if err != nil {
				b.Fatal(err)
			}
			runObjectiveSteps(b, f, m, nn.MakeBatch(seqs, labels, m.Enc.MinLen()))
		})
	}
}

// BenchmarkCARLContrast times what the memory banks add to a CARL step on
// all-MiniLM-L6-v2's sizes (H 384, batch 32): the negatives' draw, both
// directions' NCE against the banks, their backward pass and the bank
// write, with the spec §9 m for N 2,000 and the paper's SST-2 N and m.
// Compare with a FreeLB step's time (docs/carl-rar.md).
func BenchmarkCARLContrast(b *testing.B) {
	for _, size := range []struct{ n, m int }{{2000, 540}, {67349, 16000}} {
		b.Run(fmt.Sprintf("N%d-m%d", size.n, size.m), func(b *testing.B) {
			const batch, dim = 32, 384
			cfg := DefaultCARL()
			cfg.Negatives = size.m
			c, _ := NewCARL(cfg)
			ex := make([]train.Example, size.n)
			for i := range ex {
				ex[i].Label = i % 2
			}
			if err := c.Prepare(ex, size.n/batch); err != nil {
				b.Fatal(err)
			}
			c.allocate(dim)
			r := rand.New(rand.NewSource(1))
			for i := range c.bankOrig.Data {
				c.bankOrig.Data[i], c.bankAdv.Data[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			bt := &nn.Batch{B: batch, Index: r.Perm(size.n)[:batch]}
			sAdv, sClean := tensor.New(batch, dim), tensor.New(batch, dim)
			for i := range sAdv.Data {
				sAdv.Data[i], sClean.Data[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			b.ResetTimer()
			for range b.N {
				tp := ag.NewTape()
				adv, clean := unitRows(tp, tp.Leaf(sAdv)), unitRows(tp, tp.Leaf(sClean))
				neg := c.sample(r, bt)
				ld := tp.Add(c.direction(tp, 0, adv, clean, c.bankOrig, neg, batch), c.direction(tp, 1, clean, adv, c.bankAdv, neg, batch))
				tp.Backward(ld)
				c.pending = &bankUpdate{index: bt.Index, orig: clean.Data(), adv: adv.Data()}
				c.applyPending()
			}
		})
	}
}

// BenchmarkFreeLBFamilyMiniLM times one training step (loss, backward,
// no optimiser) of plain cross-entropy, FreeLB, CARL with L_D on and RAR on a random model of
// all-MiniLM-L6-v2's shape, batch 32 of 25 word pieces: the ratios are
// the step-cost targets (docs/carl-rar.md). CARL's banks hold N
// rows and it draws the spec's m for them.
func BenchmarkFreeLBFamilyMiniLM(b *testing.B) {
	const batch, length, n = 32, 25, 2000
	cfg := nn.MiniLMConfig(2)
	cfg.Reconstructor = true
	m, err := nn.New(cfg, rand.New(rand.NewSource(1)))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	seqs, labels := make([][]int32, batch), make([]int, batch)
	for i := range seqs {
		seqs[i] = make([]int32, length)
		for j := range seqs[i] {
			seqs[i][j] = int32(1000 + r.Intn(20000))
		}
		labels[i] = i % 2
	}
	bt := nn.MakeBatch(seqs, labels, 1)
	bt.Index = r.Perm(n)[:batch]
	freelb, _ := NewFreeLB(DefaultFreeLB())
	rar, _ := NewRAR(DefaultRAR())
	carl, _ := NewCARL(DefaultCARL())
	ex := make([]train.Example, n)
	for i := range ex {
		ex[i].Label = i % 2
	}
	if err := carl.Prepare(ex, n/batch); err != nil {
		b.Fatal(err)
	}
	carl.allocate(384)
	for i := range carl.bankOrig.Data {
		carl.bankOrig.Data[i], carl.bankAdv.Data[i] = float32(r.NormFloat64())/20, float32(r.NormFloat64())/20
	}
	for i := range carl.written {
		carl.written[i] = true
	}
	carl.AtStep(carl.Start())
	for _, o := range []train.Objective{train.Standard{}, freelb, carl, rar} {
		b.Run(o.Name(), func(b *testing.B) {
			for range b.N {
				tp := ag.NewTape()
				tp.Train, tp.Rng = true, rand.New(rand.NewSource(3))
				out, err := o.Loss(tp, m, bt)
				if err != nil {
					b.Fatal(err)
				}
				tp.Backward(out.Loss)
				optim.ZeroGrad(m.Params())
			}
		})
	}
}
