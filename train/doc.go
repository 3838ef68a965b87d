// Package train runs supervised training of a classifier: seeded bucketed
// batches, a pluggable objective (the hook every defense uses), Adam or SGD
// with clipping and a learning-rate schedule, best-on-dev model selection
// with early stopping, a progress bar, a JSONL metrics log, and checkpoints
// that let an interrupted run resume where it stopped.
package train
