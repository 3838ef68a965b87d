// Package text turns raw strings into tokens and token ids, and back.
//
// Tokenizers return tokens that remember the byte span of their source in the
// original string (Token.Start, Token.End). Attacks replace tokens and then
// call Detokenize to show readable text, so every other byte of the input is
// kept as it was.
//
// Three presets are registered (NewTokenizer):
//
//   - "flat": the FLAT reference cleaning (FLAT spec, Table 6). ASCII bytes
//     outside [A-Za-z0-9'`] separate tokens, text is lower-cased and the clitics
//     's 've n't 're 'd 'll are split off wherever the reference regex would
//     split them.
//   - "ftml": the FTML preprocessing (FTML spec §8). <br /> is whitespace, a
//     Treebank-like word tokenizer splits punctuation and clitics off words, and
//     tokens that are a single punctuation character are dropped.
//   - "whitespace": Unicode whitespace splitting and lower-casing, for text that
//     is already tokenised.
//
// A Vocab maps words to int32 ids. Id 0 is always "<pad>" and id 1 is always
// "<unk>" (PadID, UnkID), so a zero-filled batch is all padding and every
// unknown word shares one row. Real words follow by descending training count,
// ties broken lexicographically, so the same corpus always gives the same ids.
//
// LoadVectors reads pre-trained word vectors (GloVe and word2vec text format,
// fastText .vec, optionally gzipped) for the words of a Vocab only, streaming
// the file so that multi-gigabyte files need no more memory than the result.
package text
