// Package attack runs word-substitution adversarial attacks on text
// classifiers, decomposed as in TextAttack (Morris et al. 2020):
//
//   - a Goal says when an attack has succeeded and how close a candidate is
//     (Untargeted, Targeted; HardLabel hides the probabilities from the
//     search so it sees only the predicted label);
//   - a Transformation proposes substitutes for one word (WordSwap draws
//     them from any lexicon.Source; TextBugger adds character-level bugs);
//   - PreConstraints say which positions may still be changed (stop words,
//     no repeat modification, maximum modification rate, minimum word
//     length, protected words) and PostConstraints filter transformed texts
//     (pluggable sentence similarity, part of speech, language model, word
//     embedding distance: interfaces whose implementations plug in later);
//   - a Search explores the candidates: Greedy by word importance (delete,
//     UNK, PWWS saliency or random order), Genetic (Alzantot et al. 2018) and
//     PSO (Zang et al. 2020).
//
// A Recipe is a named composition whose defaults are its paper's, with any
// unavoidable substitution listed in its Deviations (never silently).
//
// Attacks work on the model's token sequence: an example is its original
// text plus the tokens (with byte spans) of the model's tokenizer; a
// substitution replaces one token's word, the model sees the vocabulary ids
// of the current words (truncated to MaxLen, so words past MaxLen are never
// attacked) and the perturbed text is rebuilt with text.Detokenize, which
// keeps every untouched byte of the original. Substitutes outside the
// model vocabulary cannot change a CNN/LSTM input other than to UNK, so
// candidate lists are restricted to in-vocabulary words.
//
// Queries: every distinct candidate sequence the model scores counts as one
// query (TextAttack semantics); results are cached per example by id
// sequence, and all candidates of one search step go to the model in one
// Predict call. Run attacks many examples with several workers; each
// example's random numbers come from (seed, example index), so results do
// not depend on the number of workers, and a CSV checkpoint (one fsynced row
// per example, TextAttack's column names) lets an interrupted run resume.
package attack
