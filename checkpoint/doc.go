// Package checkpoint saves and loads textarmor models.
//
// Weights use the safetensors format (the Hugging Face format: an 8-byte
// length, a JSON header, then raw little-endian tensor data), so files can
// be inspected and exchanged with other tools; the reader also converts
// F16, BF16 and F64 tensors so foreign checkpoints can be imported. The
// reader treats its input as untrusted: every header field is validated
// before data is read, and no input makes it panic (FuzzReadSafetensors).
//
// A model is a directory holding config.json (format, version, a SHA-256 of
// the weights and the caller's config), vocab.json and model.safetensors.
// Save replaces such a directory atomically, so a crash or error never
// leaves a half-written model where a good one was; Load verifies the
// checksum so a corrupted file is reported as such rather than loaded.
// WriteFileAtomic and CreateAtomic give the same guarantee for single files.
package checkpoint
