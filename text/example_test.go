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

// ExampleWordPiece_Encode splits a text as BERT's uncased tokenizer does:
// lower-cased, accents stripped, punctuation apart, greedy word pieces; each
// piece keeps its byte span in the original text.
func ExampleWordPiece_Encode() {
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cafe", "play", "##ing", "!"}
	wp, err := text.NewWordPiece(vocab, text.DefaultWordPieceOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := "The Café: PLAYING!"
	enc := wp.Encode(s, 128)
	for _, p := range enc.Pieces {
		if p.Start < 0 {
			fmt.Printf("%d %s\n", p.ID, p.Text)
			continue
		}
		fmt.Printf("%d %s %q\n", p.ID, p.Text, s[p.Start:p.End])
	}
	// Output:
	// 2 [CLS]
	// 5 the "The"
	// 6 cafe "Café"
	// 1 [UNK] ":"
	// 7 play "PLAY"
	// 8 ##ing "ING"
	// 9 ! "!"
	// 3 [SEP]
}
