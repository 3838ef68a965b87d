package main

import (
	"flag"

	"github.com/textarmor/textarmor/pipeline"
)

// registerExplain registers `attack --explain ig|lime` and its settings:
// interpretation agreement between each successful attack's original and
// adversarial text (FLAT spec §9.2).
func registerExplain(fs *flag.FlagSet, e *pipeline.ExplainConfig) {
	fs.StringVar(&e.Method, "explain", e.Method, "after the attack, compare attributions of each successful attack's original and adversarial text: ig or lime (Kendall τ and top-k intersection, FLAT spec §9.2)")
	fs.IntVar(&e.K, "explain-k", e.K, "with --explain: k of the top-k intersection")
	fs.IntVar(&e.Pairs, "explain-pairs", e.Pairs, "with --explain: explain a seeded uniform sample of this many successful attacks (FLAT spec §9.2 samples 1,000 for LIME); 0 = all")
	fs.StringVar(&e.Label, "explain-label", e.Label, "with --explain: all = explain every class and average over classes, then pairs (FLAT spec §9.2, F11's default); gold = explain each pair's gold label, average per gold class, then over classes (F11's alternative)")
}
