// Package metrics computes classification metrics (accuracy, per-class
// precision/recall/F1, macro-F1, confusion matrix) with scikit-learn's
// conventions, so numbers reported by textarmor compare directly with
// those in papers and Python baselines.
package metrics
