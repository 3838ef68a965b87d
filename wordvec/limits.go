package wordvec

// MaxWorkers is the most shards Train accepts (Options.Workers), for
// callers that check a configuration before they read a corpus.
const MaxWorkers = maxWorkers
