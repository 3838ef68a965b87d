// Package nn holds textarmor's layers and text classifiers.
//
// A Classifier is split at the points where defenses and attacks hook in
// (see docs/architecture.md): Embed turns token ids into vectors [B,L,D],
// Encode turns vectors into token representations [B,L,H] and a sentence
// representation [B,H], and Head turns the sentence representation into
// logits. Forward chains the three; Predict is the fast, batched, no-grad
// path that attacks query.
package nn
