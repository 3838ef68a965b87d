// Package ag is textarmor's reverse-mode automatic differentiation.
//
// A Tape records the operations of one forward pass; Backward walks them in
// reverse and accumulates gradients into every Var that needs one. Any
// intermediate Var keeps its gradient after Backward, so attacks and
// adversarial training read the gradient of a loss with respect to the
// embedded input directly (x.Grad), and perturbations are just another leaf
// added to the embeddings. Parameters live outside tapes as Params: their
// gradients accumulate across tapes until an optimizer clears them, and a
// frozen Param receives none.
//
// Every op has a hand-written backward pass, checked against central finite
// differences in the tests (GradCheck).
package ag
