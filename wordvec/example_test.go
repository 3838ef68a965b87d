package wordvec_test

import (
	"fmt"
	"math/rand"

	"github.com/textarmor/textarmor/wordvec"
)

// Words that share contexts get similar vectors: "cat" and "dog" appear
// after the same verbs, "car" and "bus" after others.
func ExampleTrain() {
	r := rand.New(rand.NewSource(1))
	var corpus [][]string
	for i := 0; i < 2000; i++ {
		if i%2 == 0 {
			corpus = append(corpus, []string{[]string{"feed", "pet", "walk"}[r.Intn(3)], "the", []string{"cat", "dog"}[r.Intn(2)]})
		} else {
			corpus = append(corpus, []string{[]string{"drive", "park", "wash"}[r.Intn(3)], "the", []string{"car", "bus"}[r.Intn(2)]})
		}
	}
	opt := wordvec.DefaultOptions()
	opt.Dim, opt.Sample = 20, 0 // a tiny corpus: no subsampling
	v, err := wordvec.Train(corpus, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	same, _ := v.Similarity("cat", "dog")
	other, _ := v.Similarity("cat", "car")
	// v.Write(w) saves them in the word2vec text format for text.LoadVectors.
	fmt.Println(len(v.Words), "words; cat is closer to dog than to car:", same > other)
	// Output: 11 words; cat is closer to dog than to car: true
}
