package model

import (
	"fmt"

	"github.com/textarmor/textarmor/text"
)

// WordMean embeds a text as the mean of its known tokens' rows in a
// model's input embedding table: the "average of word vectors" sentence
// baseline (GloVe avg. in the STS and transfer tables), for any model,
// CNN and LSTM ones included.
//
// A text is tokenised as the model reads it (its word tokenizer and
// vocabulary, or a transformer's word pieces), without the model's length
// limit. Tokens the model does not know (the unknown id, and a
// transformer's special pieces) are left out of the mean; the rows are
// read through the model's id map (SEM's synonym groups) when it has one.
// A text with no known token gets the zero vector: its cosine with any
// text is 0, and a classifier sees all-zero features.
type WordMean struct{ M *Model }

// Embed returns one mean vector per text (the width of the embedding
// table).
func (w WordMean) Embed(texts []string) ([][]float32, error) {
	m := w.M
	if m == nil || m.Net == nil || m.Net.Emb == nil {
		return nil, fmt.Errorf("model: word-vector mean of a model without an embedding table")
	}
	table := m.Net.Emb.W.Value
	rows, dim := table.Shape[0], table.Shape[1]
	out := make([][]float32, len(texts))
	sum := make([]float64, dim)
	for i, s := range texts {
		var ids []int32
		if m.Pieces != nil {
			ids = m.Pieces.Encode(s, 0).IDs
		} else {
			for _, t := range m.Tok.Tokenize(s) {
				ids = append(ids, m.Vocab.ID(t.Text))
			}
		}
		clear(sum)
		n := 0
		for _, id := range ids {
			if !m.Known(id) || id == text.PadID && m.Pieces == nil {
				continue
			}
			r := int(m.Net.MapID(id))
			if r < 0 || r >= rows {
				return nil, fmt.Errorf("model: token id %d maps to row %d of a %d-row embedding table", id, r, rows)
			}
			for k, x := range table.Data[r*dim : (r+1)*dim] {
				sum[k] += float64(x)
			}
			n++
		}
		v := make([]float32, dim)
		if n > 0 {
			for k := range v {
				v[k] = float32(sum[k] / float64(n))
			}
		}
		out[i] = v
	}
	return out, nil
}
