// Package wordvec trains word vectors with skip-gram and negative sampling
// (Mikolov et al. 2013), the way the original word2vec C tool does it
// (word2vec -cbow 0 -hs 0), so that users without downloadable pretrained
// vectors can make their own from a task's training texts.
//
// Defaults (DefaultOptions) are the C tool's: window 5 with a per-token
// random shrink, 5 negatives from the unigram^0.75 distribution, frequent-word
// subsampling with t = 1e-3 (the tool's formula, not the paper's), min-count
// 5, 5 epochs, a learning rate decaying linearly from 0.025 to 0.025·1e-4 over
// all epochs, input vectors drawn from U(-0.5/d, 0.5/d) and output vectors 0,
// and the tool's precomputed sigmoid table. The vector size defaults to 300
// (the papers' pretrained vectors), not the tool's 100. Differences from the
// tool are listed in docs/wordvec.md.
//
// Training is deterministic: the same sentences and Options give bit-identical
// vectors, whatever the number of CPU cores or the goroutine scheduling. With
// Workers > 1 the corpus is cut into Workers fixed shards trained in parallel
// on private copies of the rows they touch, merged into the shared tables in
// worker order every 10,000 words per worker, so the result depends on the
// value of Workers (and the seed), never on timing.
//
// Vectors.Write produces the word2vec text format, which text.LoadVectors
// (and train --embeddings) reads.
package wordvec
