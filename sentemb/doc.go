// Package sentemb trains sentence encoders contrastively: unsupervised
// SimCSE (two dropout views of each sentence, in-batch negatives) and
// RobustEmbed (seed 002, spec robustembed.md), which adds an adversarial
// view made by perturbing the token embeddings towards a higher
// contrastive loss. Both are train.Objectives over a transformer
// classifier's encoder; the head is not used.
package sentemb
