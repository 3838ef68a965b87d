package attack_test

import (
	"context"
	"fmt"
	"log"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// keywordModel is any classifier: positive when "good" or "great" occurs.
// A model of your own only has to implement attack.Victim.
type keywordModel struct{ positive map[int32]bool }

func (k keywordModel) Predict(seqs [][]int32) [][]float32 {
	out := make([][]float32, len(seqs))
	for i, seq := range seqs {
		out[i] = []float32{0.9, 0.1}
		for _, id := range seq {
			if k.positive[id] {
				out[i] = []float32{0.1, 0.9}
			}
		}
	}
	return out
}

// Attack a classifier with a published recipe: PWWS under the FTML
// protocol, over a synonym table. Every success is read back and
// re-classified before it is counted as verified.
func ExampleLookupRecipe() {
	vocab, err := text.NewVocab([]string{text.PadWord, text.UnkWord, "the", "film", "had", "a", "good", "fine", "great", "plot"})
	if err != nil {
		log.Fatal(err)
	}
	victim := keywordModel{positive: map[int32]bool{vocab.ID("good"): true, vocab.ID("great"): true}}
	target := attack.Target{Victim: victim, Vocab: vocab, Tok: text.NewWhitespace()}

	synonyms := lexicon.NewNeighbors("toy")
	synonyms.Set("good", []string{"fine", "great"})
	synonyms.Set("great", []string{"good"})
	rc, err := attack.LookupRecipe("pwws")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := rc.Build(attack.ProtocolFTML, attack.Resources{Synonyms: synonyms})
	if err != nil {
		log.Fatal(err)
	}
	examples := []attack.Example{
		{Index: 0, Text: "the film had a good plot", Label: 1},
		{Index: 1, Text: "the film had a great plot", Label: 1}, // its only synonym is positive too
	}
	results, err := attack.RunAll(context.Background(), cfg.Attack, target, examples, attack.RunOptions{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("%s: %q -> %q\n", r.Type, r.OriginalText, r.PerturbedText)
	}
	s := attack.Summarize(results)
	fmt.Printf("accuracy under attack %.0f%%, %d of %d successes verified\n", 100*s.AccuracyUnderAttack, s.Verified, s.Successful)
	// Output:
	// Successful: "the film had a good plot" -> "the film had a fine plot"
	// Failed: "the film had a great plot" -> "the film had a great plot"
	// accuracy under attack 50%, 1 of 1 successes verified
}
