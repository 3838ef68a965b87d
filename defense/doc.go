// Package defense holds training objectives that make text classifiers
// robust to word-substitution attacks.
//
// FTML (Fast Triplet Metric Learning) adds a word-level triplet loss on the
// embedding table: each word of a mini-batch is pulled towards its synonyms
// and pushed away from k random vocabulary words until their distance
// reaches a margin α. Cross-entropy trains the layers above the embedding
// lookup only (the embedded input is stop-gradiented), so the triplet loss
// is the only thing that moves the table. CML is the contrastive variant
// with temperature τ. Both implement train.Objective and touch only the
// embedding table, so they work with any encoder. See docs/ftml.md.
package defense
