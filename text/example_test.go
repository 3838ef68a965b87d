package text_test

import (
	"fmt"

	"github.com/textarmor/textarmor/text"
)

func ExampleDetokenize() {
	s := "This film isn't GREAT.<br />Really!"
	tok, _ := text.NewTokenizer("ftml")
	toks := tok.Tokenize(s)
	fmt.Println(text.Texts(toks))
	// Replace "great" (token 4); everything else stays byte-identical.
	fmt.Println(text.Detokenize(s, toks, map[int]string{4: "terrific"}))
	// Output:
	// [this film is n't great really]
	// This film isn't terrific.<br />Really!
}

func ExampleBuildVocab() {
	tok := text.NewFlat()
	var docs [][]string
	for _, s := range []string{"It's good.", "It's bad, it's bad."} {
		docs = append(docs, text.Texts(tok.Tokenize(s)))
	}
	v := text.BuildVocab(docs, 2, 0) // words seen at least twice
	fmt.Println(v.Words())
	fmt.Println(v.Encode(text.Texts(tok.Tokenize("It's good")), 0))
	// Output:
	// [<pad> <unk> 's it bad]
	// [3 2 1]
}
