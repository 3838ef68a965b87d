package train

import (
	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// BuildVocab tokenizes the training texts and keeps words seen at least
// minCount times, at most maxSize of them (0 = no cap).
func BuildVocab(tok text.Tokenizer, ex []dataset.Example, minCount, maxSize int) *text.Vocab {
	docs := make([][]string, len(ex))
	for i, e := range ex {
		docs[i] = text.Texts(tok.Tokenize(e.Text))
	}
	return text.BuildVocab(docs, minCount, maxSize)
}

// Encode maps examples to ids with the model's tokenizer, vocabulary and
// length limit; a sentence pair (Text2 set) as the pair "[CLS] Text [SEP]
// Text2 [SEP]", which needs a model that reads pairs (model.EncodePair).
func Encode(m *model.Model, ex []dataset.Example) []Example {
	out := make([]Example, len(ex))
	for i, e := range ex {
		out[i] = Example{IDs: m.EncodePair(e.Text, e.Text2), Label: e.Label}
	}
	return out
}
