// Package lexicon provides the synonym sources that word-substitution attacks
// (PWWS, TextFooler, the genetic attack, PSO, HLA) and synonym-aware defences
// (FTML, ASCC, SEM) draw their candidate substitutes from.
//
// Every source implements Source: a word in, an ordered list of substitutes
// out. The sources are
//
//   - Neighbors: precomputed neighbour sets, either read from the
//     counter-fitted neighbour file of Jia et al. 2019 (LoadNeighbors) or
//     computed as cosine nearest neighbours of word vectors
//     (NearestNeighbors) and cached with SaveNeighbors;
//   - WordNet: synonyms from the WordNet 3.0 database files, looked up the
//     way NLTK's wn.synsets(word, pos) does (morphy base forms, then every
//     lemma of every synset), which is what PWWS uses;
//   - Compose and Filter, which take the union of sources and silence stop
//     words (StopSet: TextFooler's 266-word list, FTML's 21-word list,
//     NLTK's 179-word English list).
//
// POSTagger is the lexicon-based part-of-speech tagger (universal tagset)
// that the attack package's part-of-speech constraint uses.
//
// All results are deterministic: no map iteration order leaks into an
// output, so attacks seeded the same way make the same substitutions.
package lexicon
