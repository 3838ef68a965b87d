package text

// Encode returns [CLS] a [SEP]. With maxLen > 0 the pieces of a are cut so
// that the result has at most maxLen ids (a maxLen below 2 still keeps the
// two special tokens); maxLen <= 0 means no limit.
func (w *WordPiece) Encode(a string, maxLen int) Encoding {
	st := wpState{w: w, sc: w.getScratch(), out: make([]Piece, 1, len(a)/4+3)}
	st.run(a)
	w.scratch.Put(st.sc)
	return w.finishSingle(st.out, maxLen)
}

// finishSingle turns pieces (with a free slot at index 0) into an Encoding.
func (w *WordPiece) finishSingle(out []Piece, maxLen int) Encoding {
	n := len(out) - 1
	keep := n
	if maxLen > 0 && n > maxLen-2 {
		keep = max(maxLen-2, 0)
	}
	out = out[:1+keep]
	out[0] = w.specialPiece(w.cls)
	out = append(out, w.specialPiece(w.sep))
	enc := Encoding{IDs: make([]int32, len(out)), TypeIDs: make([]int32, len(out)), Pieces: out, Truncated: n - keep}
	for i, p := range out {
		enc.IDs[i] = p.ID
	}
	return enc
}

func (w *WordPiece) specialPiece(id int32) Piece {
	return Piece{ID: id, Text: w.vocab[id], Start: -1, End: -1, Word: -1}
}

// EncodePair returns [CLS] a [SEP] b [SEP] with type ids 0 for "[CLS] a
// [SEP]" and 1 for "b [SEP]". With maxLen > 0 the sequences are cut as
// Hugging Face's "longest_first" strategy does (tokenizers 0.23.3): if both
// do not fit in maxLen-3 pieces, the shorter keeps its length when it takes
// at most half of them, otherwise each gets half (the odd one going to the
// longer, or to b when they are equally long). A maxLen below 3 still keeps
// the three special tokens. An empty b still gives its [SEP], as tokenizers
// does (transformers treats an empty text_pair as no pair at all).
func (w *WordPiece) EncodePair(a, b string, maxLen int) Encoding {
	pa := w.Tokenize(a)
	pb := w.Tokenize(b)
	n1, n2 := len(pa), len(pb)
	if maxLen > 0 {
		n1, n2 = longestFirst(n1, n2, max(maxLen-3, 0))
	}
	out := make([]Piece, 0, n1+n2+3)
	out = append(out, w.specialPiece(w.cls))
	out = append(out, pa[:n1]...)
	out = append(out, w.specialPiece(w.sep))
	second := len(out)
	out = append(out, pb[:n2]...)
	out = append(out, w.specialPiece(w.sep))
	enc := Encoding{IDs: make([]int32, len(out)), TypeIDs: make([]int32, len(out)), Pieces: out,
		Truncated: len(pa) - n1 + len(pb) - n2}
	for i, p := range out {
		enc.IDs[i] = p.ID
		if i >= second {
			enc.TypeIDs[i] = 1
		}
	}
	return enc
}

// longestFirst returns how many of n1 and n2 pieces to keep within max, as
// tokenizers' truncate_encodings with LongestFirst does.
func longestFirst(n1, n2, max int) (int, int) {
	if n1+n2 <= max {
		return n1, n2
	}
	if max == 0 {
		return 0, 0
	}
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 > max {
		n2 = n1
	} else if max-n1 > n1 {
		n2 = max - n1
	} else {
		n2 = n1
	}
	if n1+n2 > max {
		n1 = max / 2
		n2 = n1 + max%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return n1, n2
}

// EncodeWords encodes a text given as words, for attacks that edit word
// sequences: each word is normalised, split and pieced on its own, so a word
// like "don't" may give several pieces. ranges[i] is the [from, to) range of
// word i's pieces in the IDs (empty when the word has no pieces or was
// truncated away). Spans and word indexes are those of the words joined with
// single spaces: for words without white space the Encoding is the one
// Encode(strings.Join(words, " "), maxLen) returns.
func (w *WordPiece) EncodeWords(words []string, maxLen int) (Encoding, [][2]int) {
	n := 0
	for _, s := range words {
		n += len(s) + 1
	}
	st := wpState{w: w, sc: w.getScratch(), out: make([]Piece, 1, n/4+3)}
	ranges := make([][2]int, len(words))
	for i, s := range words {
		from := len(st.out)
		st.run(s)
		ranges[i] = [2]int{from, len(st.out)}
		st.base += len(s) + 1
	}
	w.scratch.Put(st.sc)
	enc := w.finishSingle(st.out, maxLen)
	limit := len(enc.IDs) - 1 // the final [SEP]
	for i := range ranges {
		ranges[i][0] = min(ranges[i][0], limit)
		ranges[i][1] = min(ranges[i][1], limit)
	}
	return enc, ranges
}

// ---------------------------------------------------------------------------
// loading
