package langmodel

import (
	"fmt"
	"math/rand/v2"
)

// grammar generates sentences "det [adj] noun verb [det [adj] noun] [prep
// det noun]" with Zipf-distributed word choice in each class, so an n-gram
// model can learn word order. The most frequent words are real ones (the cat
// sat on the mat).
type grammar struct {
	r                      *rand.Rand
	det, adj, noun, verb   []string
	prep                   []string
	zAdj, zNoun, zVerb, zD *rand.Zipf
}

func newGrammar(seed uint64, nAdj, nNoun, nVerb int) *grammar {
	r := rand.New(rand.NewPCG(seed, 0x1a2b))
	class := func(head []string, prefix string, n int) []string {
		out := append([]string(nil), head...)
		for i := len(out); i < n; i++ {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	g := &grammar{
		r:    r,
		det:  []string{"the", "a", "this", "that", "every", "some"},
		prep: []string{"on", "in", "under", "with", "near"},
		adj:  class([]string{"big", "small", "red", "old"}, "adj", nAdj),
		noun: class([]string{"cat", "mat", "dog", "bird", "man", "car"}, "noun", nNoun),
		verb: class([]string{"sat", "saw", "ran", "ate", "liked"}, "verb", nVerb),
	}
	g.zAdj = rand.NewZipf(r, 1.1, 1, uint64(len(g.adj)-1))
	g.zNoun = rand.NewZipf(r, 1.1, 1, uint64(len(g.noun)-1))
	g.zVerb = rand.NewZipf(r, 1.1, 1, uint64(len(g.verb)-1))
	g.zD = rand.NewZipf(r, 1.5, 1, uint64(len(g.det)-1))
	return g
}

func (g *grammar) np(s []string) []string {
	s = append(s, g.det[g.zD.Uint64()])
	if g.r.Float64() < 0.4 {
		s = append(s, g.adj[g.zAdj.Uint64()])
	}
	return append(s, g.noun[g.zNoun.Uint64()])
}

func (g *grammar) sentence() []string {
	s := g.np(nil)
	s = append(s, g.verb[g.zVerb.Uint64()])
	if g.r.Float64() < 0.6 {
		s = g.np(s)
	}
	if g.r.Float64() < 0.5 {
		s = append(s, g.prep[g.r.IntN(len(g.prep))])
		s = g.np(s)
	}
	return s
}

func (g *grammar) corpus(n int) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = g.sentence()
	}
	return out
}

func tokenCount(c [][]string) int {
	n := 0
	for _, s := range c {
		n += len(s)
	}
	return n
}
