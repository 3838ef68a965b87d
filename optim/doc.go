// Package optim updates ag.Params from their gradients: Adam (with
// PyTorch's semantics, plus the AdamW and BertAdam variants), SGD with
// momentum, global gradient-norm clipping and learning-rate schedules.
//
// Optimizer state (moments, step counts) is kept per parameter name and can
// be exported and restored with State/LoadState, so an interrupted training
// run resumes with bit-identical updates. Element-wise update loops are
// split over cores with tensor.ParallelFor, whose fixed chunking keeps
// results deterministic.
package optim
