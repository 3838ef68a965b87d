// Package langmodel is an n-gram language model for the language-model
// constraint of word-substitution attacks.
//
// Alzantot et al. (2018) keep a substitute only if the Google 1-billion-word
// language model scores it close to the original word. That model cannot be
// shipped, so this package stands in for it: an interpolated modified
// Kneser-Ney model (Chen & Goodman 1998, "An Empirical Study of Smoothing
// Techniques for Language Modeling", TR-10-98) of order 1 to 3 trained on
// the task's own training texts. Model.LogProb satisfies the attack
// package's LanguageModel interface.
//
// Sentences are padded with Order−1 copies of <s> and closed by </s>. Words
// are used as given (callers lowercase); words rarer than Options.MinCount,
// and the marker strings <s>, </s> and <unk> when they occur in text, all
// become <unk>. The lowest order interpolates with the uniform distribution
// over the predictable tokens (the words, </s> and <unk>), so every token
// gets a positive probability and P(·|h) sums to one for every history h.
//
// Lower orders use continuation counts N1+(•g) (the number of distinct words
// seen before g), except n-grams that start with <s>, which keep their raw
// counts because nothing can precede the sentence start (the rule KenLM
// uses). Each order has discounts D1, D2, D3+ estimated from its
// count-of-counts n1..n4:
//
//	Y = n1/(n1+2·n2),  Dk = k − (k+1)·Y·n(k+1)/nk
//
// When a count-of-count the formula needs is zero, or Dk falls outside the
// open interval (0, k) (on very small corpora), Dk is the fixed fallback
// k/2, i.e. 0.5, 1 and 1.5: close to the values large corpora give, and
// strictly between 0 and k so that every seen history leaves mass for the
// lower order and no seen n-gram loses all of its own.
//
// Results never depend on map iteration order: n-gram counts are integers,
// every probability is computed from them by one fixed sequence of float
// operations, and saved files list words and n-grams in sorted order, so
// the same training data gives the same model file byte for byte. A Model
// is read-only once built and safe for concurrent use.
package langmodel
