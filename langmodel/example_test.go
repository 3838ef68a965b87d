package langmodel_test

import (
	"fmt"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/langmodel"
)

// The model is the attack package's language model.
var _ attack.LanguageModel = (*langmodel.Model)(nil)

func Example() {
	var corpus [][]string
	for _, s := range []string{
		"the cat sat on the mat", "the dog sat on the mat",
		"a cat saw the dog", "the dog ran",
	} {
		corpus = append(corpus, strings.Fields(s))
	}
	lm, err := langmodel.Train(corpus, langmodel.Options{Label: "toy"})
	if err != nil {
		panic(err)
	}
	orig := strings.Fields("the cat sat on the mat")
	filter := attack.LMFilter{LM: lm, MaxDrop: 2}
	fmt.Println(lm.Name())
	for _, w := range []string{"dog", "ran"} {
		sub := append([]string(nil), orig...)
		sub[1] = w
		drop := lm.LogProb(orig, 1) - lm.LogProb(sub, 1)
		fmt.Printf("cat -> %s: log-probability drop %.2f, kept %v\n", w, drop, filter.Check(orig, orig, sub, 1))
	}
	// Output:
	// kn3(toy, V=9)
	// cat -> dog: log-probability drop 0.25, kept true
	// cat -> ran: log-probability drop 3.87, kept false
}
