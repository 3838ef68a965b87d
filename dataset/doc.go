// Package dataset loads text-classification data: the standard benchmark
// splits used by the project (presets), generic CSV/TSV/JSONL files, seeded
// stratified splits and corpus statistics.
//
// Choices made here:
//
//   - Example.Text is the raw text as stored in the file (tokenisation is the
//     text package's job), so attacks can show readable adversarial text.
//     The only changes are the ones a format forces: decoding (Latin-1 bytes
//     in TREC), AG News' "\" newline escape, and GLUE's trailing space.
//   - Labels are 0-based indices into Dataset.Classes.
//   - Only AG News goes through a CSV quote parser. The other files contain
//     unescaped quotes and are split on TAB (or the first space).
//   - Splits that the data does not provide (MR, TREC dev, AG News) are
//     seeded stratified hold-outs (StratifiedSplit, seed 1); Dataset.Notes
//     records the exact recipe so the split can be stated and reproduced.
//   - Every malformed line is an error "path:line: what is wrong", or, with
//     FileOptions.SkipBad, is counted in a SkipReport. Loaders never panic on
//     bad input.
package dataset
