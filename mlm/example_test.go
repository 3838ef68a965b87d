package mlm_test

import (
	"fmt"
	"math/rand"

	"github.com/textarmor/textarmor/mlm"
)

// BERT's corruption of one encoded text: [CLS]=2 and [SEP]=3 are never
// chosen; a chosen piece mostly becomes [MASK]=4.
func ExampleMasking_Apply() {
	ids := []int32{2, 10, 11, 12, 13, 14, 15, 16, 17, 3}
	p := mlm.Pieces{Vocab: 30, MaskID: 4, Special: map[int32]bool{0: true, 2: true, 3: true}}
	mk := mlm.Masking{Rate: 0.3, Mask: 0.8, Random: 0.1}
	in, pos, orig := mk.Apply(rand.New(rand.NewSource(1)), ids, p)
	fmt.Println(in)
	fmt.Println(pos, orig)
	// Output:
	// [2 10 11 12 13 14 15 4 4 3]
	// [7 8] [16 17]
}
